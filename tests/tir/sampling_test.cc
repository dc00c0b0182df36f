// Sampling instructions: a mutated decision replays to a different schedule, and a seed gives the
// same samples every time.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "tests/tir/schedule_test_util.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

TEST(SchedulePrimitives, MutatedDecisionReplaysToADifferentSchedule) {
  Workload w = Make("gemm", kGemm);
  Schedule s(w, TargetKind::kCpu, 3);
  auto C = OK(s.GetStage("C"));
  auto l = OK(s.GetLoops(C));
  auto t = OK(s.SamplePerfectTile(l[0], 2, 0, std::vector<int64_t>{4, 6}));
  OK(s.Split(l[0], {t[0], t[1]}));
  const size_t sample = s.trace().SamplingInstructions().at(0);
  auto mutated = s.trace().WithDecision(sample, nlohmann::json::array({8, 3}));
  auto r = Schedule::Replay(w, TargetKind::kCpu, mutated);
  ASSERT_TRUE(r) << r.error().message;
  const Stage& st = r->state().stages[r->state().FindStage("C")];
  EXPECT_EQ(st.iters[st.leaves[0]].extent, 8);
  EXPECT_EQ(st.iters[st.leaves[1]].extent, 3);
}

TEST(SchedulePrimitives, SamplingIsDeterministicForASeed) {
  Workload w = Make("gemm", "M=64,N=64,K=64");
  auto sample = [&](uint64_t seed) {
    Schedule s(w, TargetKind::kCpu, seed);
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    OK(s.SamplePerfectTile(l[0], 4, 8));
    OK(s.SampleCategorical({0, 1, 2, 3}, {0.25, 0.25, 0.25, 0.25}));
    return s.trace().ToJson();
  };
  EXPECT_EQ(sample(11), sample(11));
  bool differs = false;
  for (uint64_t seed = 12; seed < 20; ++seed) differs |= sample(seed) != sample(11);
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace autotune::tir
