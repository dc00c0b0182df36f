// The worker side of remote measurement (`autotune worker`): the Measurement service of
// proto/measurement.proto over a Builder and a Runner of this machine's target.
//
// A Measure call is checked as a whole before anything is built (token, target, workload, settings,
// every candidate), so a malformed request is refused with one status and one line, never
// half-measured. Accepted calls are counted against a bounded queue (running + waiting); past it the
// worker answers RESOURCE_EXHAUSTED so a job sends the batch elsewhere. Builds of one request run in
// parallel (the Builder does that); runs take the device lock for the whole batch, so kernels are timed
// one at a time and the runner keeps its per-workload state (data on the GPU, reference) between
// candidates. Failed builds are streamed at once; each run result as soon as it is known.
#pragma once

#include <autotune/proto/measurement.grpc.pb.h>
#include <grpcpp/server.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "measure/builder.h"
#include "measure/measure_config.h"
#include "measure/measure_result.h"
#include "measure/remote/tls.h"
#include "measure/runner.h"
#include "support/result.h"
#include "tir/ops/workload.h"

namespace autotune::measure::remote {

// What a worker has done so far, for the Prometheus export of `--metrics`. Atomics: every call
// thread adds to them without a lock.
class WorkerCounters {
 public:
  static constexpr int kKinds = static_cast<int>(ErrorKind::kWrongAnswer) + 1;

  struct Values {
    int64_t batches = 0;           // Measure calls accepted
    int64_t rejected_busy = 0;     // Measure calls refused because the queue was full
    int64_t candidates_built = 0;  // built without error
    int64_t candidates_run = 0;    // handed to the runner (whatever the outcome)
    std::array<int64_t, kKinds> failed{};  // candidates that ended in each error kind (kNone unused)
    int64_t queued = 0;            // calls accepted and not finished
    double busy_seconds = 0;       // time the device lock was held for runs
  };

  void AddBatch() { batches_.fetch_add(1, std::memory_order_relaxed); }
  void AddRejectedBusy() { rejected_busy_.fetch_add(1, std::memory_order_relaxed); }
  void AddBuilt(int64_t n) { built_.fetch_add(n, std::memory_order_relaxed); }
  void AddRun(int64_t n) { run_.fetch_add(n, std::memory_order_relaxed); }
  void AddFailed(ErrorKind k) { failed_[static_cast<int>(k)].fetch_add(1, std::memory_order_relaxed); }
  void AddBusyMicros(int64_t us) { busy_us_.fetch_add(us, std::memory_order_relaxed); }
  std::atomic<int64_t>& queued() { return queued_; }

  Values Snapshot() const;

 private:
  std::atomic<int64_t> batches_{0}, rejected_busy_{0}, built_{0}, run_{0}, busy_us_{0}, queued_{0};
  std::array<std::atomic<int64_t>, kKinds> failed_{};
};

struct WorkerOptions {
  std::string target_kind;  // "cpu" or "cuda": requests for another kind are FAILED_PRECONDITION
  MeasureConfig config;     // the worker's defaults and limits; requests' settings apply over it
  rpc::WorkerInfo info;     // what Describe answers (queue fields are filled in by the service)
  std::string token;        // "": no token; else every call carries `authorization: Bearer <token>`
  int queue_capacity = 4;   // Measure calls accepted at once, running and waiting
  // Builder and runner for a request's configuration. Made once per distinct configuration and kept
  // (a runner holds costly state: the CUDA executor process, workload data), so they must not depend
  // on anything but the config.
  std::function<std::unique_ptr<Builder>(const MeasureConfig&)> make_builder;
  std::function<std::unique_ptr<Runner>(const MeasureConfig&)> make_runner;
  // Where the per-batch log line goes; unset: stderr.
  std::function<void(const std::string&)> log;
};

// A Measure request checked as a whole against the worker's options: what the batch needs, or the
// status that refuses it (the worker answers it before building anything).
struct ParsedRequest {
  tir::Workload workload;
  MeasureConfig config;
  std::vector<BuildInput> inputs;
};
grpc::Status ParseMeasureRequest(const rpc::MeasureRequest& request, const WorkerOptions& options,
                                 ParsedRequest* out);

class WorkerService final : public rpc::Measurement::Service {
 public:
  explicit WorkerService(WorkerOptions options);

  grpc::Status Describe(grpc::ServerContext* context, const rpc::DescribeRequest* request,
                        rpc::WorkerInfo* reply) override;
  grpc::Status Measure(grpc::ServerContext* context, const rpc::MeasureRequest* request,
                       grpc::ServerWriter<rpc::CandidateResult>* writer) override;

  const WorkerCounters& counters() const { return counters_; }

 private:
  grpc::Status Authorize(const grpc::ServerContext& context) const;
  std::shared_ptr<Builder> BuilderFor(const MeasureConfig& config);
  Runner& RunnerFor(const MeasureConfig& config);  // with run_mu_ held
  void Log(const std::string& line) const;

  WorkerOptions options_;
  WorkerCounters counters_;

  std::mutex builders_mu_;
  std::map<std::string, std::shared_ptr<Builder>> builders_;  // by the build settings

  std::mutex run_mu_;  // the device: one batch runs at a time
  std::string runner_key_;
  std::unique_ptr<Runner> runner_;
};

// A started gRPC server for `service` (plaintext, or mutual TLS with `tls`; the CLI decides what is
// allowed on the address), with the standard health service and the protocol's message limits.
struct StartedServer {
  std::unique_ptr<grpc::Server> server;
  int port = 0;  // the bound port (the one picked for ":0")
};
Result<StartedServer> StartWorkerServer(const std::string& address, WorkerService& service,
                                        const std::optional<TlsPem>& tls = std::nullopt);

}  // namespace autotune::measure::remote
