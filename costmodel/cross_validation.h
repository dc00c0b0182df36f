// Held-out evaluation of the cost model on a training set: the records are split into folds by
// workload (the model never saw the workload it is tested on: what a new job's first rounds face) or
// at random (it saw other records of the same workloads: what the online model faces later in a
// job); each fold is scored by a model trained on the others, and the folds' ranking metrics combine.
#pragma once

#include <cstdint>

#include "costmodel/ranking_metrics.h"
#include "costmodel/training_set.h"
#include "costmodel/xgboost_model.h"
#include "support/result.h"

namespace autotune::costmodel {

enum class Split { kWorkload, kRandom };

struct CrossValidationConfig {
  Split split = Split::kWorkload;
  int folds = 5;  // by workload: at most one fold per workload
  uint64_t seed = 1;
  int top_k = 10;
  XGBoostConfig model;
};

struct CrossValidationResult {
  // Over every fold's held-out records; Spearman and top-k recall are averaged over each fold's
  // groups, `groups` counts each group once.
  RankingMetrics metrics;
  int folds = 0;
};

Result<CrossValidationResult> CrossValidate(const TrainingSet& set, const CrossValidationConfig& config);

// The folds' metrics as one: pairwise accuracy over all pairs, Spearman and top-k recall averaged
// over all groups.
RankingMetrics CombineMetrics(const std::vector<RankingMetrics>& parts);

}  // namespace autotune::costmodel
