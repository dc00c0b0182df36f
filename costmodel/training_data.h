// The cost model's training data from a tuning database: every valid record of one target, replayed
// on its workload, lowered and turned into program features (costmodel/program_features.h). This is
// what `autotune model train` and `autotune model eval` learn from; the tuner's online model builds
// the same rows from the candidates it measures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/database.h"
#include "tir/result.h"

namespace autotune::costmodel {

struct TrainingSet {
  std::vector<std::vector<float>> rows;   // feature vectors
  std::vector<double> latencies_ms;       // median latency of each row's record
  // What normalizes and groups the rows: records of one workload measured on one device.
  std::vector<std::string> groups;
  std::vector<std::string> group_names;   // per row: "gemm[M=..] on NVIDIA H200", for reports
  int64_t invalid_records = 0;  // failed or wrong: not trained on (a failure is not a slow kernel)
  int64_t stale_records = 0;    // valid, but their trace no longer replays or lowers

  size_t size() const { return rows.size(); }
  size_t NumGroups() const;
};

struct TrainingFilter {
  db::TargetQuery target{"cuda", ""};
  std::string op;  // "" = every operator
};

// Reads, replays and featurizes the records that match `filter`, lowering on `threads` threads.
Result<TrainingSet> ReadTrainingSet(db::TuningDatabase& db, const TrainingFilter& filter, int threads);

}  // namespace autotune::costmodel
