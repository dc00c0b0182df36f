#include "tir/schedule/replay_on_shape.h"

#include <gtest/gtest.h>

#include "search/default_schedule.h"
#include "tir/analysis/gpu_validity.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/structural_equal.h"

namespace autotune::tir {
namespace {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

TEST(AdaptTileSizes, KeepsFittingDecisionsAndInnerLevelsWhereTheyDivide) {
  EXPECT_EQ(AdaptTileSizes({4, 2, 8, 4}, 256, 0), (std::vector<int64_t>{4, 2, 8, 4}));
  // 384 = 3 * 128: the inner levels keep 2, 8 and 4; the outermost takes 6.
  EXPECT_EQ(AdaptTileSizes({4, 2, 8, 4}, 384, 0), (std::vector<int64_t>{6, 2, 8, 4}));
  // A stored decision whose product overflows int64 is adapted like any other that does not fit.
  EXPECT_EQ(AdaptTileSizes({int64_t{1} << 62, 8}, 256, 0), (std::vector<int64_t>{32, 8}));
  // 100 = 2^2 * 5^2: innermost 4 divides, then 5 is nearest to 8 of what is left (25).
  const auto t = AdaptTileSizes({4, 2, 8, 4}, 100, 0);
  EXPECT_EQ(Product(t), 100);
  EXPECT_EQ(t.back(), 4);
  // A prime extent goes to one level: the inner level whose recorded size is nearest in ratio.
  EXPECT_EQ(AdaptTileSizes({2, 16, 4}, 97, 0), (std::vector<int64_t>{1, 97, 1}));
  // The innermost limit holds.
  const auto limited = AdaptTileSizes({1, 64}, 256, 16);
  EXPECT_EQ(limited.back(), 16);
  EXPECT_EQ(Product(limited), 256);
}

TEST(ReplayOnShape, SameShapeGivesTheSameSchedule) {
  auto w = MakeWorkload("gemm", "M=128,N=128,K=64");
  ASSERT_TRUE(w);
  auto sch = search::DefaultSchedule(*w, TargetKind::kCuda);
  ASSERT_TRUE(sch);
  auto again = ReplayOnShape(*w, TargetKind::kCuda, sch->trace());
  ASSERT_TRUE(again) << again.error().message;
  auto a = Lower(sch->state());
  auto b = Lower(again->state());
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(StructuralEqual(a->body, b->body));
}

TEST(ReplayOnShape, GpuTracesTransferToOtherShapesAndStayValid) {
  // Traces sampled on one shape, replayed on shapes with other factorizations: most must transfer,
  // and the decisions in the new trace must be perfect tiles of the new extents.
  struct Case {
    const char* op;
    const char* from;
    const char* to;
  };
  const Case cases[] = {
      {"gemm", "M=256,N=256,K=256", "M=384,N=200,K=96"},
      {"conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", "N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1"},
      {"batch_matmul", "B=8,M=128,N=128,K=64", "B=12,M=100,N=64,K=64"},
  };
  for (const auto& c : cases) {
    auto from = MakeWorkload(c.op, c.from);
    auto to = MakeWorkload(c.op, c.to);
    ASSERT_TRUE(from && to);
    int sampled = 0, transferred = 0, valid = 0;
    for (uint64_t seed = 1; sampled < 20 && seed <= 2000; ++seed) {
      auto sch = search::RandomSchedule(*from, TargetKind::kCuda, seed);
      if (!sch) continue;
      auto source = Lower(sch->state());
      if (!source || !CheckGpuValidity(*source)) continue;  // only traces valid where they were made
      ++sampled;
      auto moved = ReplayOnShape(*to, TargetKind::kCuda, sch->trace());
      if (!moved) continue;
      ++transferred;
      for (size_t i : moved->trace().SamplingInstructions()) {
        const auto& inst = moved->trace().instructions()[i];
        if (inst.kind != "sample_perfect_tile") continue;
        // Replay checked the product against the extent; the decision recorded is the adapted one.
        EXPECT_TRUE(inst.decision.is_array());
      }
      auto f = Lower(moved->state());
      if (f && CheckGpuValidity(*f)) ++valid;
    }
    EXPECT_EQ(sampled, 20) << c.op;
    EXPECT_GE(transferred, 15) << c.op;
    EXPECT_GE(valid, 10) << c.op;
  }
}

}  // namespace
}  // namespace autotune::tir
