// The XGBoost cost model: no steering before warm-up, failures not learned, ranking of held-out
// records better than chance on a data set made here, and save -> load giving the same predictions.
//
// The data set: random cpu schedules of a gemm whose "latency" is a fixed function of the program
// (its features' raw counts: loads per multiply-add, vector lanes, unrolled work) with noise, i.e. a
// scripted runner. It tests that the model learns what the features carry; no timing is involved.
#include "costmodel/xgboost_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "costmodel/program_features.h"
#include "search/default_schedule.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"

namespace autotune::costmodel {
namespace {

struct Sample {
  tir::Schedule schedule;
  double latency_ms;
};

double ScriptedLatency(const tir::Schedule& sch) {
  auto f = tir::Lower(sch.state());
  EXPECT_TRUE(f);
  const ProgramCounts c = CountProgram(*f);
  const double macs = std::max(1.0, c.float_mul);
  return 1.0 + (c.global_loads / macs) * 3.0 + 2.0 / (1.0 + std::log2(1.0 + c.vectorized_lanes / macs * 64)) +
         (c.unrolled_iterations > macs ? 0.5 : 0.0);
}

std::vector<Sample> DataSet(const tir::Workload& w, uint64_t first_seed, int n) {
  std::vector<Sample> out;
  for (uint64_t seed = first_seed; static_cast<int>(out.size()) < n && seed < first_seed + 10 * n; ++seed) {
    auto sch = search::RandomSchedule(w, tir::TargetKind::kCpu, seed);
    if (!sch) continue;
    // Plus +-15% of noise the features cannot explain, as measurements have.
    Random noise(seed * 7919);
    const double latency = ScriptedLatency(*sch) * (1.0 + 0.3 * (noise.UniformReal() - 0.5));
    out.push_back({std::move(*sch), latency});
  }
  return out;
}

measure::MeasureResult Timed(double ms) {
  measure::MeasureResult r;
  r.latencies_ms = {ms};
  r.median_ms = ms;
  r.correct = true;
  return r;
}

double PairwiseAccuracy(const std::vector<double>& scores, const std::vector<Sample>& samples) {
  int64_t agree = 0, pairs = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    for (size_t j = i + 1; j < samples.size(); ++j) {
      if (samples[i].latency_ms == samples[j].latency_ms) continue;
      ++pairs;
      agree += (scores[i] > scores[j]) == (samples[i].latency_ms < samples[j].latency_ms);
    }
  }
  return pairs ? static_cast<double>(agree) / static_cast<double>(pairs) : 0;
}

std::vector<const tir::Schedule*> Ptrs(const std::vector<Sample>& s) {
  std::vector<const tir::Schedule*> out;
  for (const auto& x : s) out.push_back(&x.schedule);
  return out;
}

XGBoostConfig TestConfig() {
  XGBoostConfig c;
  c.warmup_records = 32;
  c.threads = 1;
  return c;
}

TEST(XGBoostCostModel, RanksHeldOutRecordsAndRoundTrips) {
  const tir::Workload w = *tir::MakeWorkload("gemm", "M=64,N=48,K=32");
  const auto train = DataSet(w, 1, 160);
  const auto held_out = DataSet(w, 5000, 60);
  ASSERT_EQ(train.size(), 160u);
  ASSERT_EQ(held_out.size(), 60u);

  XGBoostCostModel model(TestConfig());
  // Not trained yet: random scores, and failures teach nothing.
  std::vector<measure::MeasureResult> failed(train.size(), measure::MeasureResult::Error(measure::ErrorKind::kRunError, "x"));
  model.Update(w, Ptrs(train), failed);
  EXPECT_FALSE(model.trained());
  EXPECT_EQ(model.valid_records(), 0);

  std::vector<measure::MeasureResult> results;
  for (const auto& s : train) results.push_back(Timed(s.latency_ms));
  model.Update(w, Ptrs(train), results);
  ASSERT_TRUE(model.trained());
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
  std::vector<measure::MeasureResult> results;
  for (const auto& s : few) results.push_back(Timed(s.latency_ms));
  model.Update(w, Ptrs(few), results);
  EXPECT_FALSE(model.trained());
  EXPECT_EQ(model.valid_records(), 8);
  const auto a = model.Predict(w, Ptrs(few));
  const auto b = model.Predict(w, Ptrs(few));
  EXPECT_NE(a, b) << "random ranking draws new scores every call";
  EXPECT_FALSE(model.Save());
}

}  // namespace
}  // namespace autotune::costmodel
