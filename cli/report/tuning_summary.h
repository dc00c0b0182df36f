// What a tuning job achieved for one workload on one target, read from its records: the best found,
// how many trials it took to come close to it, how long it took, and the best-so-far curves the
// report draws. Pure data in, data out: no database, no formatting.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/record.h"

namespace autotune::cli::report {

// "Close to the best" means this share of the final best throughput: the figure
// scripts/tuning_curve.py and docs/BENCHMARKS.md compare runs by (latency <= best / 0.9).
inline constexpr double kReachShare = 0.9;

// What the report needs of one record. Kept small (no trace) so one pass over a large database
// does not hold every trace in memory.
struct Trial {
  bool valid = false;  // ran, correct and timed with a positive throughput
  double median_ms = 0;
  double gflops = 0;
  std::optional<int64_t> measured_at;  // seconds since the epoch; nullopt when the text is unreadable
};

// The records of one workload on one target, in trial order (the database's insertion order).
struct WorkloadTrials {
  db::WorkloadInfo workload;
  db::TargetInfo target;  // the first record's
  std::vector<Trial> trials;
};

// Groups records, as ForEachRecord hands them over, by workload and target. A target here is its
// kind, architecture and device, as for the search's "measured before" check
// (TuningDatabase::MeasuredTraceHashes): a job resumed after a driver or toolkit update continues
// the same curve instead of starting a new one.
class TrialGrouper {
 public:
  void Add(const db::TuningRecord& record);
  // The groups in the order of their first record (the order they were tuned in).
  std::vector<WorkloadTrials> Take();

 private:
  std::vector<WorkloadTrials> groups_;
  std::map<std::string, size_t> index_;  // workload key + target -> position in groups_
};

// A point of a best-so-far curve: after trial (or second) x the best throughput found was y.
struct CurvePoint {
  double x = 0;
  double best_gflops = 0;
  bool improved = false;  // x is where the best rose; false only for the closing point
};

struct WorkloadSummary {
  db::WorkloadInfo workload;
  db::TargetInfo target;
  int64_t records = 0;  // trials, failed ones included
  int64_t valid = 0;
  std::optional<double> best_ms;      // fastest valid median; nullopt without a valid record
  std::optional<double> best_gflops;  // highest valid throughput
  // The first trial (1-based, failed trials counted) after which the best so far was at least
  // kReachShare of best_gflops.
  std::optional<int64_t> trials_to_reach;
  // Seconds from the earliest to the latest measured_at (the first and the last record's, unless
  // merged databases interleave them). 1 s resolution, and it includes any gaps between resumed
  // runs. nullopt when a measured_at cannot be read.
  std::optional<double> span_s;
  std::optional<double> candidates_per_s;  // records / span_s; nullopt when the span is 0
  // Best-so-far throughput against trial number: a point at each trial that raised it, and one at
  // the last trial. Failed trials move the curve right but never up. Empty without a valid record.
  std::vector<CurvePoint> by_trial;
  // The same against seconds since the earliest record: records in measured_at order (stable, so
  // records of one second keep their trial order), a point at each rise and one at span_s. Empty
  // without a valid record or when span_s is nullopt.
  std::vector<CurvePoint> by_seconds;
};

WorkloadSummary Summarize(const WorkloadTrials& trials);

}  // namespace autotune::cli::report
