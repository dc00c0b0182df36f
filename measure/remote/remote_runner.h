// The job side of remote measurement: a Runner that sends generated candidates (CodegenBuilder's
// results) to `autotune worker` daemons over gRPC and returns their results in order, so the tuning
// loop does not know where a kernel ran. A batch is spread over every healthy worker of the job's
// target; when a worker fails mid-call (killed, unreachable, past its deadline), the candidates it
// had not answered go to the other workers, so nothing is lost and nothing is measured twice. When
// no worker is left, Run returns no results for the batch and `Unavailable()` says why: the tuner
// then stops without storing anything of that batch.
#pragma once

#include <autotune/proto/measurement.grpc.pb.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "db/target.h"
#include "measure/measure_config.h"
#include "measure/runner.h"
#include "tir/result.h"
#include "tir/target.h"

namespace autotune::measure::remote {

struct RemoteConfig {
  // "host:port" each, or one "dns:///name:port" (gRPC resolves the name and balances round-robin
  // over every address it has).
  std::vector<std::string> workers;
  std::string token;             // sent as "authorization: Bearer <token>"; "" = none
  tir::TargetKind target = tir::TargetKind::kCpu;
  std::string arch;              // "" = the workers' (they must agree)
  MeasureConfig settings;        // timing and checking, sent with every batch
  double connect_timeout_s = 10; // to answer Describe
  int max_attempts = 3;          // per candidate: sends before it counts as not measurable
};

class RemoteRunner final : public Runner {
 public:
  // Connects to every worker and asks what it measures on; an error when none is usable (each
  // worker's reason in the message).
  static Result<std::unique_ptr<RemoteRunner>> Connect(RemoteConfig config);

  std::vector<MeasureResult> Run(const tir::Workload& workload, const std::vector<BuildResult>& builds) override;

  // The target the records of this job are stored under (the workers' device).
  const db::TargetInfo& target_info() const { return target_info_; }
  // Why the last Run could not measure its batch ("" when it could).
  std::string Unavailable() const override { return unavailable_; }
  int healthy_workers() const;
  int total_workers() const { return static_cast<int>(workers_.size()); }

 private:
  struct Worker {
    std::string address;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<rpc::Measurement::Stub> stub;
    bool healthy = false;
    std::string last_error;
  };
  explicit RemoteRunner(RemoteConfig config) : config_(std::move(config)) {}
  Result<rpc::WorkerInfo> Describe(Worker& w) const;
  // Sends candidates `which` of the batch to worker `w`; fills results of those answered, returns
  // the ones it did not answer.
  std::vector<size_t> Send(Worker& w, const rpc::MeasureRequest& base, const std::vector<BuildResult>& builds,
                           const std::vector<size_t>& which, std::vector<MeasureResult>& results,
                           std::vector<bool>& done);

  RemoteConfig config_;
  std::vector<Worker> workers_;
  db::TargetInfo target_info_;
  std::string unavailable_;
  mutable std::mutex mu_;  // results/done while worker threads stream
};

}  // namespace autotune::measure::remote
