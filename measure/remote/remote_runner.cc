#include "measure/remote/remote_runner.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "measure/remote/wire.h"

namespace autotune::measure::remote {

namespace {

std::chrono::system_clock::time_point In(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds));
}

std::string StatusText(const grpc::Status& s) {
  return fmt::format("{} ({})", s.error_message().empty() ? "no message" : s.error_message(),
                     static_cast<int>(s.error_code()));
}

// A batch's deadline: every candidate built and run within the worker's limits, one at a time at worst.
double CallSeconds(const MeasureConfig& c, size_t candidates) {
  return 30 + static_cast<double>(candidates) * (c.build_timeout_s + c.run_timeout_s);
}

// How many addresses a gRPC target names, at least 1: "dns:///host:port" (or "dns://server/host:port")
// as many as the name resolves to here, "ipv4:a:p,b:p" / "ipv6:..." one per entry, host:port one.
// gRPC resolves the target itself for the connections; this only sizes the split of a batch.
int AddressCount(const std::string& target) {
  if (target.rfind("ipv4:", 0) == 0 || target.rfind("ipv6:", 0) == 0) {
    return std::clamp(static_cast<int>(std::count(target.begin(), target.end(), ',')) + 1, 1, 64);
  }
  if (target.rfind("dns:", 0) != 0) return 1;
  std::string rest = target.substr(4);
  if (rest.rfind("//", 0) == 0) {
    const size_t slash = rest.find('/', 2);
    rest = slash == std::string::npos ? rest.substr(2) : rest.substr(slash + 1);
  }
  std::string host = rest;
  if (!rest.empty() && rest.front() == '[') {
    host = rest.substr(1, rest.find(']') == std::string::npos ? std::string::npos : rest.find(']') - 1);
  } else if (const size_t colon = rest.rfind(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return 1;
  int n = 0;
  for (addrinfo* a = found; a; a = a->ai_next) ++n;
  freeaddrinfo(found);
  return std::clamp(n, 1, 64);
}

}  // namespace

Result<std::unique_ptr<RemoteRunner>> RemoteRunner::Connect(RemoteConfig config) {
  if (config.workers.empty()) return MakeError("no workers given");
  std::unique_ptr<RemoteRunner> runner(new RemoteRunner(std::move(config)));
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(static_cast<int>(kMaxMessageBytes));
  args.SetMaxSendMessageSize(static_cast<int>(kMaxMessageBytes));
  args.SetLoadBalancingPolicyName("round_robin");  // a dns:/// name: every address it resolves to
  // A worker that went away is tried again every few seconds (gRPC's default backoff grows to two
  // minutes), so a restarted one rejoins the job within a round or two.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  const auto credentials = MakeChannelCredentials(runner->config_.tls);
  std::vector<std::string> problems;
  for (const auto& address : runner->config_.workers) {
    Worker w;
    w.address = address;
    w.channel = grpc::CreateCustomChannel(address, credentials, args);
    w.stub = rpc::Measurement::NewStub(w.channel);
    w.calls = AddressCount(address);
    auto info = runner->Describe(w);
    if (!info) {
      problems.push_back(fmt::format("{}: {}", address, info.error().message));
    } else if (runner->target_info_.kind.empty()) {
      // The first usable worker settles the target of the job's records.
      runner->target_info_ = {info->target_kind(), info->arch(), info->device(), info->driver(), info->toolkit()};
      w.healthy = true;
    } else if (info->device() != runner->target_info_.device) {
      problems.push_back(fmt::format("{}: measures on {}, the job's other workers on {}", address, info->device(),
                                     runner->target_info_.device));
    } else {
      w.healthy = true;
    }
    runner->workers_.push_back(std::move(w));
  }
  if (runner->target_info_.kind.empty()) {
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
    return MakeError("no usable worker: " + all);
  }
  for (auto& w : runner->workers_) {
    if (!w.healthy) w.last_error = "not usable at start";
  }
  return runner;
}

Result<rpc::WorkerInfo> RemoteRunner::Describe(Worker& w) const {
  grpc::ClientContext ctx;
  ctx.set_deadline(In(config_.connect_timeout_s));
  ctx.set_wait_for_ready(true);  // a worker still starting gets until the deadline
  if (!config_.token.empty()) ctx.AddMetadata("authorization", "Bearer " + config_.token);
  rpc::WorkerInfo info;
  const grpc::Status s = w.stub->Describe(&ctx, rpc::DescribeRequest(), &info);
  if (!s.ok()) return MakeError(s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
                                    ? fmt::format("unreachable within {:g} s", config_.connect_timeout_s)
                                    : StatusText(s));
  const std::string kind = tir::TargetKindName(config_.target);
  if (info.target_kind() != kind) return MakeError(fmt::format("measures {}, not {}", info.target_kind(), kind));
  if (!config_.arch.empty() && info.arch() != config_.arch) {
    return MakeError(fmt::format("has architecture {}, not {}", info.arch(), config_.arch));
  }
  if (!target_info_.arch.empty() && info.arch() != target_info_.arch) {
    return MakeError(fmt::format("has architecture {}, the job's other workers {}", info.arch(), target_info_.arch));
  }
  return info;
}

int RemoteRunner::addresses() const {
  int n = 0;
  for (const auto& w : workers_) n += w.calls;
  return n;
}

std::string RemoteRunner::Unavailable() const {
  std::lock_guard lock(workers_mu_);
  return unavailable_;
}

int RemoteRunner::healthy_workers() const {
  std::lock_guard lock(workers_mu_);
  int n = 0;
  for (const auto& w : workers_) n += w.healthy;
  return n;
}

RemoteRunner::Sent RemoteRunner::Send(const Worker& w, const rpc::MeasureRequest& base,
                                      const std::vector<BuildResult>& builds, const std::vector<size_t>& which,
                                      std::vector<MeasureResult>& results, std::vector<bool>& done) {
  rpc::MeasureRequest req = base;
  for (size_t i : which) ToWire(builds[i], req.add_candidates());
  grpc::ClientContext ctx;
  ctx.set_deadline(In(CallSeconds(config_.settings, which.size())));
  if (!config_.token.empty()) ctx.AddMetadata("authorization", "Bearer " + config_.token);
  auto reader = w.stub->Measure(&ctx, req);
  std::vector<bool> answered(which.size(), false);
  rpc::CandidateResult r;
  while (reader->Read(&r)) {
    if (r.index() < 0 || static_cast<size_t>(r.index()) >= which.size() || answered[r.index()]) continue;
    answered[r.index()] = true;
    const size_t i = which[r.index()];
    MeasureResult m = FromWire(r);
    std::lock_guard lock(mu_);
    results[i] = std::move(m);
    done[i] = true;
  }
  const grpc::Status s = reader->Finish();
  Sent sent;
  for (size_t k = 0; k < which.size(); ++k) {
    if (!answered[k]) sent.unanswered.push_back(which[k]);
  }
  if (sent.unanswered.empty()) return sent;
  // A worker that refuses a request (INVALID_ARGUMENT) would refuse it again anywhere: those
  // candidates are answered as errors; any other failure is the worker's.
  if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    std::lock_guard lock(mu_);
    for (size_t i : sent.unanswered) {
      results[i] = MeasureResult::Error(ErrorKind::kBuildError, "refused by worker " + w.address + ": " + s.error_message());
      done[i] = true;
    }
    sent.unanswered.clear();
    return sent;
  }
  sent.failure = s.ok() ? "the stream ended before every result" : StatusText(s);
  return sent;
}

std::vector<MeasureResult> RemoteRunner::Run(const tir::Workload& workload, const std::vector<BuildResult>& builds) {
  {
    std::lock_guard lock(workers_mu_);
    unavailable_.clear();
  }
  std::vector<MeasureResult> results(builds.size());
  std::vector<bool> done(builds.size(), false);
  std::vector<int> attempts(builds.size(), 0);
  std::vector<size_t> pending;
  for (size_t i = 0; i < builds.size(); ++i) {
    if (builds[i].ok()) {
      pending.push_back(i);
      continue;
    }
    results[i] = MeasureResult::Error(builds[i].error_kind, builds[i].error_message);
    results[i].build_seconds = builds[i].build_seconds;
    results[i].build_cpu_seconds = builds[i].build_cpu_seconds;
    done[i] = true;
  }
  rpc::MeasureRequest base;
  base.set_target_kind(tir::TargetKindName(config_.target));
  base.set_arch(target_info_.arch);
  base.mutable_workload()->set_op(workload.op);
  base.mutable_workload()->set_shape(tir::ShapeText(workload.shape));
  base.mutable_workload()->set_epilogue(workload.epilogue);
  base.mutable_workload()->set_dtype(workload.TypeName());
  ToWire(config_.settings, base.mutable_settings());

  // A worker that left the job rejoins once its channel connects again (checked without waiting:
  // the channel keeps reconnecting in the background).
  for (auto& w : workers_) {
    if (w.channel->GetState(/*try_to_connect=*/true) != GRPC_CHANNEL_READY) continue;
    {
      std::lock_guard lock(workers_mu_);
      if (w.healthy) continue;
    }
    auto info = Describe(w);
    std::lock_guard lock(workers_mu_);
    if (info && info->device() == target_info_.device) w.healthy = true;
  }

  while (!pending.empty()) {
    std::vector<Worker*> healthy;
    {
      std::lock_guard lock(workers_mu_);
      for (auto& w : workers_) {
        if (w.healthy) healthy.push_back(&w);
      }
      if (healthy.empty()) {
        std::string why;
        for (const auto& w : workers_) why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", w.address, w.last_error);
        unavailable_ = "no worker can measure: " + why;
        return {};
      }
    }
    // Contiguous shares, as equal as possible, one per call: a worker gets `calls` of them at once.
    std::vector<Worker*> slots;
    for (Worker* w : healthy) slots.insert(slots.end(), static_cast<size_t>(w->calls), w);
    const size_t n = slots.size();
    std::vector<std::vector<size_t>> shares(n);
    for (size_t k = 0; k < pending.size(); ++k) shares[k * n / pending.size()].push_back(pending[k]);
    std::vector<Sent> sent(n);
    std::vector<std::thread> calls;
    for (size_t t = 0; t < n; ++t) {
      if (shares[t].empty()) continue;
      calls.emplace_back([&, t] { sent[t] = Send(*slots[t], base, builds, shares[t], results, done); });
    }
    for (auto& c : calls) c.join();
    pending.clear();
    std::lock_guard lock(workers_mu_);
    for (size_t t = 0; t < n; ++t) {
      Worker& w = *slots[t];
      if (!sent[t].failure.empty()) {
        w.last_error = sent[t].failure;
        // A failed call takes a worker out of the job; a name with other addresses still connected
        // stays (gRPC stops picking the address that failed).
        if (w.calls == 1 || w.channel->GetState(/*try_to_connect=*/false) != GRPC_CHANNEL_READY) w.healthy = false;
      }
      for (size_t i : sent[t].unanswered) {
        if (++attempts[i] < config_.max_attempts) {
          pending.push_back(i);
          continue;
        }
        results[i] = MeasureResult::Error(ErrorKind::kRunError, fmt::format("sent {} times, no worker answered (last: {}: {})",
                                                                            attempts[i], w.address, w.last_error));
        done[i] = true;
      }
    }
  }
  return results;
}

}  // namespace autotune::measure::remote
