// Region analysis (tir/lower/region.h): the range an index covers with some loop variables relaxed,
// and the shared copy it sizes for a grouped convolution.
#include "tir/lower/region.h"

#include <gtest/gtest.h>

#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/printer.h"
#include "tir/schedule/schedule.h"
#include "search/default_schedule.h"

namespace autotune::tir {
namespace {

class RegionTest : public ::testing::Test {
 protected:
  // b: a block index, fixed; t: a thread index over [0, 8), relaxed.
  IndexRange Range(const Expr& e) {
    return EvalIndexRange(e, {{b.get(), LoopRange{b, 48, false}}, {t.get(), LoopRange{t, 8, true}}});
  }
  std::string Min(const IndexRange& r) { return ToString(r.min); }
  Var b = MakeVar("b"), t = MakeVar("t");
};

TEST_F(RegionTest, LinearIndexIsExact) {
  const IndexRange r = Range(Add(Mul(b, IntImm(8)), t));
  EXPECT_EQ(Min(r), "(b * 8)");
  EXPECT_EQ(r.extent, 8);
}

TEST_F(RegionTest, FloorDivByOneIsItsNumerator) {
  const IndexRange r = Range(FloorDiv(Add(Mul(b, IntImm(8)), t), IntImm(1)));
  EXPECT_EQ(Min(r), "(b * 8)");
  EXPECT_EQ(r.extent, 8);
}

// floordiv(8b + t, 4) * 3: two groups of a block's 8 channels, 3 input channels a group.
TEST_F(RegionTest, FloorDivOfFixedAndRelaxedKeepsTheFixedPart) {
  const IndexRange r = Range(Mul(FloorDiv(Add(Mul(b, IntImm(8)), t), IntImm(4)), IntImm(3)));
  EXPECT_EQ(Min(r), "(b * 6)");
  EXPECT_EQ(r.extent, 4);  // groups 2b and 2b + 1: channel starts 6b and 6b + 3
  // Not provably aligned to the divisor: 8b + 2 + t spans up to three quotients.
  const IndexRange u = Range(FloorDiv(Add(Add(Mul(b, IntImm(8)), t), IntImm(2)), IntImm(4)));
  EXPECT_EQ(Min(u), "(b * 2)");
  EXPECT_EQ(u.extent, 3);
}

// A relaxed variable alone under floordiv stays bounded over its range, as before.
TEST_F(RegionTest, FloorDivOfRelaxedAloneIsBoundedOverItsRange) {
  const IndexRange r = Range(Add(Mul(b, IntImm(2)), FloorDiv(t, IntImm(4))));
  EXPECT_EQ(Min(r), "(b * 2)");
  EXPECT_EQ(r.extent, 2);
}

// The depthwise convolution's hand-picked tiled schedule copies one channel's padded plane to shared
// memory per block (16 x 16 floats), not every channel's window box (384 x 9 x 9, before floordiv's
// fixed part was kept).
TEST(RegionOfGroupedConvolution, SharedCopyHoldsTheBlocksChannelsOnly) {
  auto w = MakeWorkload("conv2d", "N=1,C=384,H=14,W=14,K=384,R=3,S=3,stride=1,pad=1,groups=384");
  ASSERT_TRUE(w) << w.error().message;
  auto sch = search::DefaultSchedule(*w, TargetKind::kCuda);
  ASSERT_TRUE(sch) << sch.error().message;
  auto f = Lower(sch->state());
  ASSERT_TRUE(f) << f.error().message;
  const std::string ir = ToString(f->body);
  EXPECT_NE(ir.find("allocate pad_shared: float32[256] shared"), std::string::npos) << ir;
}

}  // namespace
}  // namespace autotune::tir
