// Evaluating cost models: ranking metrics on rankings small enough to score by hand, and
// cross-validation by workload and at random on the scripted data set.
#include <gtest/gtest.h>

#include "costmodel/cross_validation.h"
#include "costmodel/ranking_metrics.h"
#include "costmodel/training_set.h"
#include "tests/costmodel/scripted_data.h"

namespace autotune::costmodel {
namespace {

using namespace autotune::costmodel::testing;

TEST(RankingMetrics, ScoredByHand) {
  // Group a: scores agree with speed. Group b: scores are reversed. Group c: one record, no pairs.
  const std::vector<double> latencies = {1, 2, 3, 1, 2, 3, 4, 5};
  const std::vector<double> scores = {3, 2, 1, 1, 2, 3, 4, 9};
  const std::vector<std::string> groups = {"a", "a", "a", "b", "b", "b", "b", "c"};
  const RankingMetrics m = EvaluateRanking(scores, latencies, groups, 1);
  EXPECT_EQ(m.groups, 2);
  EXPECT_EQ(m.records, 7);
  EXPECT_EQ(m.pairs, 3 + 6);
  EXPECT_DOUBLE_EQ(m.pairwise_accuracy, 3.0 / 9);
  EXPECT_DOUBLE_EQ(m.spearman, 0.0);  // (1 + -1) / 2
  EXPECT_DOUBLE_EQ(m.top_k_recall, 0.5);

  // Tied scores count half; tied latencies make no pair.
  const RankingMetrics ties = EvaluateRanking({1, 1, 2}, {1, 2, 2}, {"g", "g", "g"}, 2);
  EXPECT_EQ(ties.pairs, 2);
  EXPECT_DOUBLE_EQ(ties.pairwise_accuracy, (0.5 + 0.0) / 2);
  // Top-2 by speed: record 0 and one of the tied 1, 2; by score: 2 and (tie broken by position) 0.
  EXPECT_DOUBLE_EQ(ties.top_k_recall, 0.5);
}

TEST(RankingMetrics, CombiningFoldsWeighsPairsAndGroups) {
  RankingMetrics a, b;
  a.pairwise_accuracy = 1.0, a.pairs = 30, a.groups = 1, a.records = 10, a.spearman = 1.0, a.top_k_recall = 1.0;
  b.pairwise_accuracy = 0.5, b.pairs = 10, b.groups = 3, b.records = 12, b.spearman = 0.2, b.top_k_recall = 0.0;
  const RankingMetrics all = CombineMetrics({a, b});
  EXPECT_DOUBLE_EQ(all.pairwise_accuracy, (30 + 5) / 40.0);
  EXPECT_DOUBLE_EQ(all.spearman, (1.0 + 3 * 0.2) / 4);
  EXPECT_DOUBLE_EQ(all.top_k_recall, 0.25);
  EXPECT_EQ(all.records, 22);
}

TrainingSet ScriptedSet(const std::vector<tir::Workload>& workloads, int per_workload) {
  TrainingSet set;
  for (const auto& w : workloads) {
    const auto samples = DataSet(w, 1, per_workload);
    const auto rows = Rows(samples);
    for (size_t i = 0; i < samples.size(); ++i) {
      set.rows.push_back(rows[i]);
      set.latencies_ms.push_back(samples[i].latency_ms);
      set.groups.push_back(w.Key());
    }
  }
  return set;
}

TEST(CrossValidation, HeldOutWorkloadsAndHeldOutRecordsRankBetterThanChance) {
  const std::vector<tir::Workload> workloads = {*tir::MakeWorkload("gemm", "M=64,N=48,K=32"),
                                                *tir::MakeWorkload("gemm", "M=32,N=64,K=64"),
                                                *tir::MakeWorkload("batch_matmul", "B=2,M=32,N=32,K=16")};
  const TrainingSet set = ScriptedSet(workloads, 60);
  CrossValidationConfig config;
  config.model.threads = 1;
  config.model.rounds = 40;
  config.top_k = 5;
  for (auto split : {Split::kWorkload, Split::kRandom}) {
    config.split = split;
    auto r = CrossValidate(set, config);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->folds, split == Split::kWorkload ? 3 : 5);  // one fold per workload at most
    EXPECT_EQ(r->metrics.records, 180);
    std::printf("split %d: pairwise %.3f, spearman %.3f\n", static_cast<int>(split), r->metrics.pairwise_accuracy,
                r->metrics.spearman);
    EXPECT_GT(r->metrics.pairwise_accuracy, 0.6);
    EXPECT_GT(r->metrics.spearman, 0.2);
  }
  // By workload needs two workloads.
  config.split = Split::kWorkload;
  auto one = CrossValidate(ScriptedSet({workloads[0]}, 20), config);
  ASSERT_FALSE(one);
  EXPECT_NE(one.error().message.find("2 or more workloads"), std::string::npos);
}

}  // namespace
}  // namespace autotune::costmodel
