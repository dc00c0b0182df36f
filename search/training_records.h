// The cost model's training data from a tuning database: every valid record of one target, replayed
// on its workload, lowered and turned into program features (costmodel/program_features.h), as the
// search featurizes its candidates. What `autotune model train` and `autotune model eval` learn from.
#pragma once

#include <string>

#include "costmodel/training_set.h"
#include "db/database.h"
#include "tir/result.h"

namespace autotune::search {

struct TrainingFilter {
  db::TargetQuery target{"cuda", ""};
  std::string op;  // "" = every operator
};

// Reads, replays and featurizes the records that match `filter`, lowering on `threads` threads.
Result<costmodel::TrainingSet> ReadTrainingSet(db::TuningDatabase& db, const TrainingFilter& filter, int threads);

}  // namespace autotune::search
