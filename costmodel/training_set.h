// The cost model's training data: one feature row per valid measurement, with its latency and the
// group it is normalized and ranked within (one workload on one device). search/training_records
// reads it from a tuning database; the tuner's online model builds the same rows from what it measures.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace autotune::costmodel {

struct TrainingSet {
  std::vector<std::vector<float>> rows;   // feature vectors
  std::vector<double> latencies_ms;       // median latency of each row's record
  std::vector<std::string> groups;        // what normalizes and groups the rows
  std::vector<std::string> group_names;   // per row: "gemm[M=..] on NVIDIA H200", for reports
  int64_t invalid_records = 0;  // failed or wrong: not trained on (a failure is not a slow kernel)
  int64_t stale_records = 0;    // valid, but their trace no longer replays or lowers

  size_t size() const { return rows.size(); }
  size_t NumGroups() const { return std::set<std::string>(groups.begin(), groups.end()).size(); }
};

}  // namespace autotune::costmodel
