#include "measure/remote/worker_service.h"

#include <fmt/format.h>
#include <grpc/support/log.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string_view>
#include <vector>

#include "measure/remote/wire.h"
#include "tir/ops/operator.h"
#include "support/stopwatch.h"

namespace autotune::measure::remote {
namespace {

using Clock = std::chrono::steady_clock;


// Status messages are one line: a compiler's or parser's multi-line text is folded.
std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

grpc::Status Refuse(grpc::StatusCode code, const std::string& message) { return {code, OneLine(message)}; }

// Compares a secret without returning early at the first differing byte, so the time taken does not
// tell an attacker how much of a guess was right (only the length may show).
bool SameSecret(std::string_view a, std::string_view b) {
  unsigned diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

// The settings a builder or a runner is made with: equal keys can share one.
std::string BuilderKey(const MeasureConfig& c) { return fmt::format("{}", c.build_timeout_s); }
std::string RunnerKey(const MeasureConfig& c) {
  return fmt::format("{} {} {} {} {} {} {} {}", c.repeats, c.min_repeat_ms, c.warmup, c.flush_cache, c.run_timeout_s,
                     c.rtol, c.seed, c.screen_ratio);
}

// Releases a queue slot however the call ends.
class QueueSlot {
 public:
  explicit QueueSlot(std::atomic<int64_t>& queued) : queued_(queued) {}
  ~QueueSlot() { queued_.fetch_sub(1); }
  QueueSlot(const QueueSlot&) = delete;
  QueueSlot& operator=(const QueueSlot&) = delete;

 private:
  std::atomic<int64_t>& queued_;
};

}  // namespace

grpc::Status ParseMeasureRequest(const rpc::MeasureRequest& request, const WorkerOptions& options,
                                 ParsedRequest* out) {
  using grpc::StatusCode;
  if (request.target_kind() != options.target_kind) {
    return Refuse(StatusCode::FAILED_PRECONDITION,
                  fmt::format("this worker measures {}, not '{}'", options.target_kind, request.target_kind()));
  }
  if (!request.arch().empty() && request.arch() != options.info.arch()) {
    return Refuse(StatusCode::FAILED_PRECONDITION,
                  fmt::format("this worker measures {}:{}, not {}:{}", options.target_kind, options.info.arch(),
                              request.target_kind(), request.arch()));
  }
  if (!request.has_workload()) return Refuse(StatusCode::INVALID_ARGUMENT, "the request has no workload");
  if (request.candidates_size() == 0) return Refuse(StatusCode::INVALID_ARGUMENT, "the request has no candidates");
  if (request.candidates_size() > kMaxCandidates) {
    return Refuse(StatusCode::RESOURCE_EXHAUSTED, fmt::format("the request has {} candidates, more than the {} allowed",
                                                              request.candidates_size(), kMaxCandidates));
  }
  const rpc::Workload& w = request.workload();
  Result<tir::Workload> workload =
      tir::MakeWorkload(w.op(), w.shape(), w.epilogue(), w.dtype().empty() ? "float32" : w.dtype());
  if (!workload) return Refuse(StatusCode::INVALID_ARGUMENT, "the workload: " + workload.error().message);
  Result<MeasureConfig> config = ApplySettings(request.settings(), options.config);
  if (!config) return Refuse(StatusCode::INVALID_ARGUMENT, "the settings: " + config.error().message);
  const bool cuda = options.target_kind == "cuda";
  out->inputs.reserve(request.candidates_size());
  for (int i = 0; i < request.candidates_size(); ++i) {
    Result<BuildInput> in = FromWire(request.candidates(i), cuda);
    if (!in) return Refuse(StatusCode::INVALID_ARGUMENT, fmt::format("candidate {}: {}", i, in.error().message));
    out->inputs.push_back(std::move(*in));
  }
  out->workload = std::move(*workload);
  out->config = std::move(*config);
  return grpc::Status::OK;
}

WorkerCounters::Values WorkerCounters::Snapshot() const {
  Values v;
  v.batches = batches_.load(std::memory_order_relaxed);
  v.rejected_busy = rejected_busy_.load(std::memory_order_relaxed);
  v.candidates_built = built_.load(std::memory_order_relaxed);
  v.candidates_run = run_.load(std::memory_order_relaxed);
  for (int k = 0; k < kKinds; ++k) v.failed[k] = failed_[k].load(std::memory_order_relaxed);
  v.queued = queued_.load(std::memory_order_relaxed);
  v.busy_seconds = static_cast<double>(busy_us_.load(std::memory_order_relaxed)) * 1e-6;
  return v;
}

WorkerService::WorkerService(WorkerOptions options) : options_(std::move(options)) {
  if (options_.queue_capacity < 1) options_.queue_capacity = 1;
  options_.info.set_target_kind(options_.target_kind);
  options_.info.set_queue_capacity(options_.queue_capacity);
}

void WorkerService::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

grpc::Status WorkerService::Authorize(const grpc::ServerContext& context) const {
  if (options_.token.empty()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find("authorization");
  const char* why = nullptr;
  if (it == metadata.end()) {
    why = "this worker needs a token";
  } else if (!SameSecret(std::string_view(it->second.data(), it->second.size()), "Bearer " + options_.token)) {
    why = "wrong token";
  }
  if (!why) return grpc::Status::OK;
  Log(fmt::format("autotune worker: {} refused: {}", context.peer(), why));
  return Refuse(grpc::StatusCode::UNAUTHENTICATED, why);
}

grpc::Status WorkerService::Describe(grpc::ServerContext* context, const rpc::DescribeRequest*,
                                     rpc::WorkerInfo* reply) {
  if (grpc::Status s = Authorize(*context); !s.ok()) return s;
  *reply = options_.info;
  reply->set_queued(static_cast<int32_t>(counters_.queued().load()));
  return grpc::Status::OK;
}

std::shared_ptr<Builder> WorkerService::BuilderFor(const MeasureConfig& config) {
  const std::string key = BuilderKey(config);
  std::lock_guard<std::mutex> lock(builders_mu_);
  auto it = builders_.find(key);
  if (it != builders_.end()) return it->second;
  // Jobs send a handful of distinct settings; forget them all rather than grow without bound.
  if (builders_.size() >= 16) builders_.clear();
  std::shared_ptr<Builder> b = options_.make_builder(config);
  builders_.emplace(key, b);
  return b;
}

Runner& WorkerService::RunnerFor(const MeasureConfig& config) {
  const std::string key = RunnerKey(config);
  if (!runner_ || key != runner_key_) {
    runner_.reset();  // the old one first: a CUDA runner's executor holds the GPU
    runner_ = options_.make_runner(config);
    runner_key_ = key;
  }
  return *runner_;
}

grpc::Status WorkerService::Measure(grpc::ServerContext* context, const rpc::MeasureRequest* request,
                                    grpc::ServerWriter<rpc::CandidateResult>* writer) {
  using grpc::StatusCode;
  if (grpc::Status s = Authorize(*context); !s.ok()) return s;
  const auto t0 = Clock::now();

  // ---- the whole request is checked before anything is built ----
  ParsedRequest parsed;
  if (grpc::Status s = ParseMeasureRequest(*request, options_, &parsed); !s.ok()) {
    Log(fmt::format("autotune worker: {} refused: {}", context->peer(), s.error_message()));
    return s;
  }
  std::vector<BuildInput>& inputs = parsed.inputs;
  const tir::Workload& workload = parsed.workload;
  const MeasureConfig& config = parsed.config;

  // ---- back-pressure: a full queue refuses at once, so the job can try another worker ----
  if (counters_.queued().fetch_add(1) >= options_.queue_capacity) {
    counters_.queued().fetch_sub(1);
    counters_.AddRejectedBusy();
    const std::string why = fmt::format("the worker is busy ({} batches accepted at once)", options_.queue_capacity);
    Log(fmt::format("autotune worker: {} refused: {}", context->peer(), why));
    return Refuse(StatusCode::RESOURCE_EXHAUSTED, why);
  }
  QueueSlot slot(counters_.queued());
  counters_.AddBatch();

  const int n = static_cast<int>(inputs.size());
  int valid = 0, failed = 0;
  bool client_gone = false;
  auto send = [&](int index, const MeasureResult& r, const BuildResult* b) {
    if (r.ok()) {
      ++valid;
    } else {
      ++failed;
      counters_.AddFailed(r.error_kind);
    }
    rpc::CandidateResult out;
    ToWire(index, r, b, &out);
    if (!writer->Write(out)) client_gone = true;
  };

  try {
    // ---- build the batch in parallel; failed builds are answered at once ----
    std::vector<BuildResult> builds = BuilderFor(config)->Build(inputs);
    inputs.clear();
    std::vector<int> to_run;
    for (int i = 0; i < n && !client_gone; ++i) {
      if (builds[i].ok()) {
        counters_.AddBuilt(1);
        to_run.push_back(i);
        continue;
      }
      MeasureResult r = MeasureResult::Error(builds[i].error_kind, builds[i].error_message);
      r.build_seconds = builds[i].build_seconds;
      r.build_cpu_seconds = builds[i].build_cpu_seconds;
      send(i, r, &builds[i]);
    }

    // ---- run one candidate at a time on the device, the lock held for the whole batch ----
    if (!to_run.empty() && !client_gone && !context->IsCancelled()) {
      std::lock_guard<std::mutex> lock(run_mu_);
      const auto busy0 = Clock::now();
      Runner& runner = RunnerFor(config);
      for (int i : to_run) {
        if (client_gone || context->IsCancelled()) break;
        std::vector<BuildResult> one;
        one.push_back(std::move(builds[i]));
        std::vector<MeasureResult> results = runner.Run(workload, one);
        counters_.AddRun(1);
        const MeasureResult r = results.empty()
                                    ? MeasureResult::Error(ErrorKind::kRunError, "the runner returned no result")
                                    : std::move(results.front());
        send(i, r, &one.front());
      }
      counters_.AddBusyMicros(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - busy0).count());
    }
  } catch (const std::exception& e) {
    // Builders and runners report failures as results; this is the last line of defence for the
    // daemon (e.g. out of memory), which must answer rather than die.
    Log(fmt::format("autotune worker: {}: internal error: {}", context->peer(), e.what()));
    return Refuse(StatusCode::INTERNAL, fmt::format("internal error on the worker: {}", e.what()));
  }

  const bool cancelled = client_gone || context->IsCancelled();
  Log(fmt::format("autotune worker: {} {} candidates={} valid={} failed={}{} {:.2f} s", context->peer(),
                  workload.CanonicalText(), n, valid, failed, cancelled ? " (cancelled)" : "", SecondsSince(t0)));
  if (cancelled) return Refuse(StatusCode::CANCELLED, "the call was cancelled");
  return grpc::Status::OK;
}

namespace {

// gRPC's log lines on stderr, except while the server binds: a failed bind is logged over several
// lines, and StartWorkerServer's error says it in one.
std::atomic<bool> g_binding{false};

void GrpcLog(gpr_log_func_args* a) {
  if (g_binding.load()) return;
  std::fprintf(stderr, "grpc %s %s:%d] %s\n", gpr_log_severity_string(a->severity), a->file, a->line, a->message);
}

}  // namespace

Result<StartedServer> StartWorkerServer(const std::string& address, WorkerService& service,
                                        const std::optional<TlsPem>& tls) {
  // The standard grpc.health.v1 service: load balancers and `dns:///` jobs probe it.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  StartedServer started;
  // gRPC sets SO_REUSEPORT by default: a second worker on a port in use would share it (and its
  // requests) silently instead of failing.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(address, MakeServerCredentials(tls), &started.port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(kMaxMessageBytes));
  builder.SetMaxSendMessageSize(static_cast<int>(kMaxMessageBytes));
  builder.RegisterService(&service);
  gpr_set_log_function(GrpcLog);
  g_binding = true;
  started.server = builder.BuildAndStart();
  g_binding = false;
  if (!started.server || started.port == 0) {
    if (started.server) started.server->Shutdown();
    return MakeError(fmt::format("cannot listen on '{}' ({})", address,
                                 tls ? "address in use or not valid here, or the TLS certificate and key do not match"
                                     : "address in use or not valid here"));
  }
  return started;
}

}  // namespace autotune::measure::remote
