// The XGBoost cost model: no steering before warm-up, failures not learned, ranking of held-out
// records better than chance with every objective on a data set made here (tests/costmodel/
// scripted_data.h), save -> load giving the same predictions, models of other feature versions
// refused, and a loaded model refined by what a job measures.
#include "costmodel/xgboost_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "costmodel/program_features.h"
#include "costmodel/ranking_metrics.h"
#include "tests/costmodel/scripted_data.h"
#include "search/default_schedule.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"

namespace autotune::costmodel {
namespace {

using namespace autotune::costmodel::testing;

// One workload: every pair of samples is comparable.
double PairwiseAccuracy(const std::vector<double>& scores, const std::vector<Sample>& samples) {
  std::vector<double> latencies;
  for (const auto& x : samples) latencies.push_back(x.latency_ms);
  return EvaluateRanking(scores, latencies, std::vector<std::string>(samples.size(), "w"), 1).pairwise_accuracy;
}

XGBoostConfig TestConfig() {
  XGBoostConfig c;
  c.warmup_records = 32;
  c.threads = 1;
  return c;
}

// Balanced weights: a group of 3 rows and one of 1 (mean 2): the first's labels count 2/3 each, the
// second's twice, so each group weighs its labels' mean times 2.
TEST(XGBoostCostModel, BalancedWeightsGiveEveryWorkloadOneShare) {
  const std::vector<float> w = BalancedWeights({1.0f, 0.5f, 0.25f, 1.0f}, {3, 1});
  ASSERT_EQ(w.size(), 4u);
  EXPECT_FLOAT_EQ(w[0], 2.0f / 3);
  EXPECT_FLOAT_EQ(w[1], 1.0f / 3);
  EXPECT_FLOAT_EQ(w[2], 1.0f / 6);
  EXPECT_FLOAT_EQ(w[3], 2.0f);
}

TEST(XGBoostCostModel, RanksHeldOutRecordsAndRoundTrips) {
  const tir::Workload w = *tir::MakeWorkload("gemm", "M=64,N=48,K=32");
  const auto train = DataSet(w, 1, 160);
  const auto held_out = DataSet(w, 5000, 60);
  ASSERT_EQ(train.size(), 160u);
  ASSERT_EQ(held_out.size(), 60u);

  XGBoostCostModel model(TestConfig());
  // Not trained yet: random scores, and failures teach nothing.
  model.Update(w, Ptrs(train), std::vector<std::optional<double>>(train.size(), std::nullopt));
  EXPECT_FALSE(model.trained());
  EXPECT_EQ(model.valid_records(), 0);

  model.Update(w, Ptrs(train), Latencies(train));
  ASSERT_TRUE(model.trained());
  EXPECT_TRUE(model.Steers());
  EXPECT_EQ(model.valid_records(), 160);

  const std::vector<double> scores = model.Predict(w, Ptrs(held_out));
  const double accuracy = PairwiseAccuracy(scores, held_out);
  // The best any model can do: rank by the noise-free latency.
  std::vector<double> oracle;
  for (const auto& s : held_out) oracle.push_back(-ScriptedLatency(s.schedule));
  const double best = PairwiseAccuracy(oracle, held_out);
  std::printf("pairwise accuracy on held-out records: %.3f (noise-free ranking %.3f, chance 0.5)\n", accuracy, best);
  EXPECT_GT(accuracy, 0.6);
  EXPECT_GT(accuracy, best - 0.1);

  auto saved = model.Save();
  ASSERT_TRUE(saved) << saved.error().message;
  XGBoostCostModel loaded(TestConfig());
  ASSERT_TRUE(loaded.Load(*saved));
  EXPECT_TRUE(loaded.trained());
  EXPECT_EQ(loaded.Predict(w, Ptrs(held_out)), scores);
  EXPECT_FALSE(loaded.Load("not a model"));
}

TEST(XGBoostCostModel, DoesNotSteerBeforeWarmup) {
  const tir::Workload w = *tir::MakeWorkload("gemm", "M=64,N=48,K=32");
  const auto few = DataSet(w, 1, 8);
  XGBoostCostModel model(TestConfig());
  model.Update(w, Ptrs(few), Latencies(few));
  EXPECT_FALSE(model.trained());
  EXPECT_FALSE(model.Steers()) << "the search does not breed on its random scores";
  EXPECT_EQ(model.valid_records(), 8);
  const auto a = model.Predict(w, Ptrs(few));
  const auto b = model.Predict(w, Ptrs(few));
  EXPECT_NE(a, b) << "random ranking draws new scores every call";
  EXPECT_FALSE(model.Save());
}

TEST(XGBoostCostModel, EveryObjectiveRanksHeldOutRecordsOfTwoWorkloads) {
  const tir::Workload a = *tir::MakeWorkload("gemm", "M=64,N=48,K=32");
  const tir::Workload b = *tir::MakeWorkload("batch_matmul", "B=2,M=32,N=32,K=16");
  std::vector<std::vector<float>> rows;
  std::vector<double> latencies;
  std::vector<std::string> groups;
  for (const auto* w : {&a, &b}) {
    const auto train = DataSet(*w, 1, 100);
    const auto r = Rows(train);
    rows.insert(rows.end(), r.begin(), r.end());
    for (const auto& x : train) {
      latencies.push_back(x.latency_ms);
      groups.push_back(w->Key());
    }
  }
  const auto held_out = DataSet(a, 5000, 60);
  for (auto objective : {Objective::kPairwise, Objective::kRegression, Objective::kWeightedRegression}) {
    XGBoostConfig c = TestConfig();
    c.objective = objective;
    XGBoostCostModel model(c);
    ASSERT_TRUE(model.Train(rows, latencies, groups)) << ObjectiveName(objective);
    const double accuracy = PairwiseAccuracy(model.PredictRows(Rows(held_out)), held_out);
    std::printf("%s: pairwise accuracy on held-out records %.3f\n", ObjectiveName(objective), accuracy);
    EXPECT_GT(accuracy, 0.6) << ObjectiveName(objective);
    EXPECT_EQ(ParseObjective(ObjectiveName(objective)), objective);
  }
  EXPECT_FALSE(ParseObjective("rank"));
  XGBoostCostModel model(TestConfig());
  EXPECT_FALSE(model.Train(rows, latencies, {"only one group"}));
}

TEST(XGBoostCostModel, SavedModelsSayWhatTheyAreAndOtherFeatureVersionsAreRefused) {
  const tir::Workload w = *tir::MakeWorkload("gemm", "M=64,N=48,K=32");
  const auto train = DataSet(w, 1, 80);
  std::vector<double> latencies;
  for (const auto& x : train) latencies.push_back(x.latency_ms);
  XGBoostConfig c = TestConfig();
  c.target = "cpu:x86_64";
  XGBoostCostModel model(c);
  ASSERT_TRUE(model.Train(Rows(train), latencies, std::vector<std::string>(train.size(), w.Key())));
  auto saved = model.Save();
  ASSERT_TRUE(saved) << saved.error().message;

  XGBoostCostModel loaded(TestConfig());
  auto info = loaded.Load(*saved);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->feature_version, kFeatureVersion);
  EXPECT_EQ(info->objective, ObjectiveName(XGBoostConfig{}.objective));
  EXPECT_EQ(info->target, "cpu:x86_64");
  EXPECT_EQ(info->records, 80);

  std::string other = *saved;
  const size_t at = other.find(kFeatureVersion);
  ASSERT_NE(at, std::string::npos);
  other.replace(at, std::string(kFeatureVersion).size(), "v0-old");
  auto refused = XGBoostCostModel(TestConfig()).Load(other);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("retrain"), std::string::npos) << refused.error().message;
}

TEST(XGBoostCostModel, ALoadedModelSteersAtOnceAndTheJobLearnsOnTopOfIt) {
  const tir::Workload w = *tir::MakeWorkload("gemm", "M=64,N=48,K=32");
  const auto earlier = DataSet(w, 1, 80);
  std::vector<double> latencies;
  for (const auto& x : earlier) latencies.push_back(x.latency_ms);
  XGBoostCostModel trained(TestConfig());
  ASSERT_TRUE(trained.Train(Rows(earlier), latencies, std::vector<std::string>(earlier.size(), w.Key())));
  const std::string bytes = *trained.Save();

  XGBoostCostModel job(TestConfig());
  ASSERT_TRUE(job.Load(bytes));
  EXPECT_TRUE(job.trained());
  const auto held_out = DataSet(w, 5000, 60);
  const auto base_scores = job.Predict(w, Ptrs(held_out));
  EXPECT_EQ(base_scores, job.Predict(w, Ptrs(held_out))) << "a loaded model's scores are not random";
  EXPECT_GT(PairwiseAccuracy(base_scores, held_out), 0.6);

  // What the job measures trains a model on top of the loaded one: the scores change, the ranking
  // stays good, and the stack cannot be saved as if it were one model.
  const auto measured = DataSet(w, 9000, 40);
  job.Update(w, Ptrs(measured), Latencies(measured));
  const auto refined = job.Predict(w, Ptrs(held_out));
  EXPECT_NE(refined, base_scores);
  EXPECT_GT(PairwiseAccuracy(refined, held_out), 0.6);
  EXPECT_FALSE(job.Save());
}

}  // namespace
}  // namespace autotune::costmodel
