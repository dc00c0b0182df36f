#include "costmodel/cross_validation.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "support/random.h"

namespace autotune::costmodel {
namespace {

// Fisher-Yates on our own engine's draws (std::shuffle's order differs between standard libraries).
template <typename T>
void Shuffle(Random& rng, std::vector<T>& v) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(i) - 1))]);
}

// fold[i] of every row.
Result<std::vector<int>> AssignFolds(const TrainingSet& set, const CrossValidationConfig& config, int* folds) {
  Random rng(config.seed);
  std::vector<int> fold(set.size());
  if (config.split == Split::kWorkload) {
    std::vector<std::string> groups(set.groups.begin(), set.groups.end());
    std::sort(groups.begin(), groups.end());
    groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
    if (groups.size() < 2) {
      return MakeError(fmt::format("a split by workload needs records of 2 or more workloads, these have {} "
                                   "(split at random instead)",
                                   groups.size()));
    }
    Shuffle(rng, groups);
    *folds = std::min<int>(config.folds, static_cast<int>(groups.size()));
    std::map<std::string, int> fold_of;
    for (size_t g = 0; g < groups.size(); ++g) fold_of[groups[g]] = static_cast<int>(g % *folds);
    for (size_t i = 0; i < set.size(); ++i) fold[i] = fold_of[set.groups[i]];
  } else {
    if (set.size() < static_cast<size_t>(config.folds)) {
      return MakeError(fmt::format("{} records are too few for {} folds", set.size(), config.folds));
    }
    std::vector<size_t> order(set.size());
    std::iota(order.begin(), order.end(), 0);
    Shuffle(rng, order);
    *folds = config.folds;
    for (size_t k = 0; k < order.size(); ++k) fold[order[k]] = static_cast<int>(k % *folds);
  }
  return fold;
}

}  // namespace

RankingMetrics CombineMetrics(const std::vector<RankingMetrics>& parts) {
  RankingMetrics all;
  double right = 0, spearman = 0, recall = 0;
  for (const auto& m : parts) {
    all.k = m.k;
    all.pairs += m.pairs;
    all.records += m.records;
    all.groups += m.groups;
    right += m.pairwise_accuracy * static_cast<double>(m.pairs);
    spearman += m.spearman * m.groups;
    recall += m.top_k_recall * m.groups;
  }
  if (all.pairs > 0) all.pairwise_accuracy = right / static_cast<double>(all.pairs);
  if (all.groups > 0) {
    all.spearman = spearman / all.groups;
    all.top_k_recall = recall / all.groups;
  }
  return all;
}

Result<CrossValidationResult> CrossValidate(const TrainingSet& set, const CrossValidationConfig& config) {
  if (config.folds < 2) return MakeError("cross-validation needs 2 or more folds");
  int folds = 0;
  AT_TRY(fold, AssignFolds(set, config, &folds));
  std::vector<RankingMetrics> parts;
  std::set<std::string> evaluated;  // groups some fold ranked (a group spans folds in a random split)
  for (int f = 0; f < folds; ++f) {
    TrainingSet train, test;
    for (size_t i = 0; i < set.size(); ++i) {
      TrainingSet& to = fold[i] == f ? test : train;
      to.rows.push_back(set.rows[i]);
      to.latencies_ms.push_back(set.latencies_ms[i]);
      to.groups.push_back(set.groups[i]);
    }
    if (train.size() == 0 || test.size() == 0) continue;
    XGBoostCostModel model(config.model);
    AT_TRY_VOID(model.Train(train.rows, train.latencies_ms, train.groups));
    parts.push_back(EvaluateRanking(model.PredictRows(test.rows), test.latencies_ms, test.groups, config.top_k));
    std::map<std::string, int> sizes;
    for (const auto& g : test.groups) ++sizes[g];
    for (const auto& [g, n] : sizes) {
      if (n >= 2) evaluated.insert(g);
    }
  }
  RankingMetrics all = CombineMetrics(parts);
  all.groups = static_cast<int>(evaluated.size());
  return CrossValidationResult{all, folds};
}

}  // namespace autotune::costmodel
