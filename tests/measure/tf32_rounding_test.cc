// The C backend's round_tf32 rounds exactly as the host's RoundToTF32 (and the GPU's cvt.rna): ties
// between neighbouring TF32 values go away from zero, values just below a tie go down, random values
// and the split of 3xtf32 (x - round(x), rounded) agree bit for bit.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/measure/exact_on_c_path.h"
#include "tir/ops/precision.h"

namespace autotune::measure {
namespace {

using namespace autotune::test_kernels;

constexpr int64_t kValues = 512;
const double kTF32Unit = std::ldexp(1.0, -10);  // TF32's spacing in [1, 2)

// Four outputs per index i: a tie in [1, 2) (signed by i's parity), the float just below that
// tie, x rounded, and the low part of x's split.
tir::PrimFunc TF32RoundingKernel() {
  using tir::DType;
  Buffer X = Flat("X", kValues), O = Flat("O", 4 * kValues);
  Var i = MakeVar("i");
  const Expr fi = Cast(DType::kFloat32, FloorMod(i, I(1000)));
  const Expr sign = Select(EQ(FloorMod(i, I(2)), I(1)), F(-1), F(1));
  const Expr tie = sign * (F(1) + (fi + F(0.5)) * F(kTF32Unit));
  const Expr below = sign * (F(1) + (fi + F(0.5)) * F(kTF32Unit) - F(std::ldexp(1.0, -23)));
  const Expr x = Load(X, {i});
  const Expr outs[] = {tir::RoundTF32(tie), tir::RoundTF32(below), tir::RoundTF32(x),
                       tir::RoundTF32(x - tir::RoundTF32(x)) * F(std::ldexp(1.0, 11))};
  std::vector<Stmt> stores;
  for (int k = 0; k < 4; ++k) stores.push_back(Store(O, outs[k], {i * 4 + k}));
  return tir::PrimFunc{"rounding", {X, O}, Loop(i, kValues, Seq(stores))};
}

tir::Workload TF32RoundingWorkload() {
  tir::Workload w;
  w.op = "rounding";
  w.inputs = {{"X", tir::DType::kFloat32, {kValues}}};
  w.output = {"O", tir::DType::kFloat32, {4 * kValues}};
  w.reference = [](const std::vector<const float*>& in, float* out) {
    using tir::RoundToTF32;
    for (int64_t i = 0; i < kValues; ++i) {
      const float sign = i % 2 ? -1.0f : 1.0f;
      const float tie = sign * static_cast<float>(1 + (i % 1000 + 0.5) * kTF32Unit);
      const float x = in[0][i];
      out[i * 4] = RoundToTF32(tie);
      out[i * 4 + 1] = RoundToTF32(sign * (std::abs(tie) - std::ldexp(1.0f, -23)));
      out[i * 4 + 2] = RoundToTF32(x);
      out[i * 4 + 3] = RoundToTF32(x - RoundToTF32(x)) * std::ldexp(1.0f, 11);
    }
  };
  return w;
}

TEST(TF32RoundingInC, RoundsAsTheHostAndTheGpu) {
  ExpectExactOnCPath(TF32RoundingKernel(), TF32RoundingWorkload(), {"at_round_tf32_f32("});
}

// The host rounding itself: nearest, ties away from zero, 13 low bits cleared, non-finite kept.
TEST(TF32Rounding, NearestTiesAwayFromZero) {
  using tir::RoundToTF32;
  const float unit = std::ldexp(1.0f, -10);
  EXPECT_EQ(RoundToTF32(1 + unit / 2), 1 + unit);
  EXPECT_EQ(RoundToTF32(-(1 + unit / 2)), -(1 + unit));
  EXPECT_EQ(RoundToTF32(1 + unit / 2 - std::ldexp(1.0f, -23)), 1.0f);
  EXPECT_EQ(RoundToTF32(1 + 2.5f * unit), 1 + 3 * unit);  // a tie away from zero, not to even
  EXPECT_EQ(RoundToTF32(3.0f), 3.0f);
  EXPECT_TRUE(std::isinf(RoundToTF32(INFINITY)));
  EXPECT_TRUE(std::isnan(RoundToTF32(NAN)));
  EXPECT_TRUE(std::isinf(RoundToTF32(3.4028235e38f)));  // above TF32's largest: rounds up to infinity
}

}  // namespace
}  // namespace autotune::measure
