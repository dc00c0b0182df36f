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
#include <optional>
#include <string>
#include <vector>

#include "db/target.h"
#include "measure/measure_config.h"
#include "measure/remote/tls.h"
#include "measure/runner.h"
#include "support/result.h"
#include "tir/target.h"

namespace autotune::measure::remote {

struct RemoteConfig {
  // "host:port" each, or one gRPC target naming several addresses: "dns:///name:port" (gRPC
  // resolves the name) or "ipv4:a:port,b:port". Calls to such a target are balanced round-robin over
  // its addresses, and each batch is split into one call per address.
  std::vector<std::string> workers;
  std::string token;             // sent as "authorization: Bearer <token>"; "" = none
  std::optional<TlsPem> tls;     // mutual TLS with the workers; nullopt = plaintext
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
  std::string Unavailable() const override;
  int ConcurrentRuns() const override { return 2; }
  int healthy_workers() const;
  int total_workers() const { return static_cast<int>(workers_.size()); }
  // Addresses behind the workers (more than total_workers() when a name has several).
  int addresses() const;

 private:
  struct Worker {
    std::string address;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<rpc::Measurement::Stub> stub;
    // Calls a batch's share is split into: 1 for host:port; for a dns:/// name, the addresses it
    // resolves to, so that round-robin balancing gives each of them a call at once.
    int calls = 1;
    bool healthy = false;
    std::string last_error;
  };
  // One call's outcome: the candidates it did not answer and, if it failed, why.
  struct Sent {
    std::vector<size_t> unanswered;
    std::string failure;
  };
  explicit RemoteRunner(RemoteConfig config) : config_(std::move(config)) {}
  Result<rpc::WorkerInfo> Describe(Worker& w) const;
  // Sends candidates `which` of the batch to worker `w` in one call; fills results of those answered.
  // Several calls to one worker may run at once (a dns:/// name): `w` is only read.
  Sent Send(const Worker& w, const rpc::MeasureRequest& base, const std::vector<BuildResult>& builds,
                           const std::vector<size_t>& which, std::vector<MeasureResult>& results,
                           std::vector<bool>& done);

  RemoteConfig config_;
  std::vector<Worker> workers_;
  db::TargetInfo target_info_;
  std::string unavailable_;
  mutable std::mutex mu_;         // results/done while worker threads stream
  mutable std::mutex workers_mu_; // workers' health and unavailable_: two Run calls may be in flight
};

}  // namespace autotune::measure::remote
