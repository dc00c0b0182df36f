// The cost model's training data from a tuning database: every valid record of one target, replayed
// on its workload, lowered and turned into program features (costmodel/program_features.h), as the
// search featurizes its candidates. What `autotune model train` and `autotune model eval` learn from.
#pragma once

#include <set>
#include <string>

#include "costmodel/training_set.h"
#include "db/database.h"
#include "support/result.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

struct TrainingFilter {
  db::TargetQuery target{"cuda", ""};
  std::string op;  // "" = every operator
  std::set<std::string> leave_out;  // workload keys (tir::Workload::Key) whose records are skipped
};

// A stored record's trace (its trace_json) replayed on `workload`; an error when it no longer parses
// or replays (a record of an older schedule space). Pure: runs on any thread.
Result<tir::Schedule> ReplayStoredTrace(const std::string& trace_json, const tir::Workload& workload,
                                        tir::Target target);

// Reads, replays and featurizes the records that match `filter`, lowering on `threads` threads.
Result<costmodel::TrainingSet> ReadTrainingSet(db::TuningDatabase& db, const TrainingFilter& filter, int threads);

}  // namespace autotune::search
