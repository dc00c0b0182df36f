// What a record must satisfy to be believed, whoever wrote it: the numbers a measurement produces
// and a trace that replays on its workload. `db import` and `db merge` refuse records that fail,
// and the database's best-record queries (so `db top`, seeding and the lookup library) never return
// one, whatever a file was edited to hold.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "db/record.h"
#include "support/result.h"
#include "tir/ops/workload.h"

namespace autotune::db {

// Numbers only, no replay: every number finite and none negative; a valid record (ran, correct)
// has positive latencies, a median that is their median, and GFLOP/s computed from that median.
// The error names the field and both values.
Result<void> CheckRecordNumbers(const TuningRecord& r);

// CheckRecordNumbers, and a valid record's trace replays on its workload for its target's kind
// (factors that multiply to the loop's extent, loops that exist, ...). Rebuilt workloads are kept
// for the next record of the same workload.
class RecordChecker {
 public:
  Result<void> Check(const TuningRecord& r);
  // Check of every record, the replays on every usable core: the index of the first record that
  // fails (in order) and why, or nothing.
  std::optional<std::pair<size_t, Error>> FirstFailure(const std::vector<TuningRecord>& records);

 private:
  Result<const tir::Workload*> WorkloadOf(const WorkloadInfo& info);
  // The replay half of Check, on a workload already built: safe on several threads at once.
  static Result<void> CheckReplays(const TuningRecord& r, const tir::Workload& w);
  std::unordered_map<std::string, tir::Workload> workloads_;
};

}  // namespace autotune::db
