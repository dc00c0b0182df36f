// The C backend's 16-bit float conversions round exactly as support/half.h (and the GPU) do: the
// kernel rounds values that are exact ties, subnormal ones and random ones through float16 and
// bfloat16, and every output must equal the host's exactly (every step is exact in float). The
// executor's widening of 16-bit outputs for their check agrees with support/half.h too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "measure/kernel_tensor.h"
#include "support/half.h"
#include "tests/measure/exact_on_c_path.h"

namespace autotune::measure {
namespace {

using namespace autotune::test_kernels;

// Six outputs per index i: ties between neighbouring float16 values in [1, 2), float16 subnormal
// ties scaled up by 2^14 (to at most 1: the checker judges small values against the mean), ties between bfloat16 values in [1, 2), and x rounded through each type.
constexpr int64_t kN = 512;

double TieF16(int64_t i) { return (i % 2 ? -1 : 1) * (1 + (2.0 * i + 1) * std::ldexp(1.0, -11)); }
double SubnormalF16(int64_t i) { return (2.0 * i + 1) * std::ldexp(1.0, -25); }
double TieBF16(int64_t i) { return (i % 2 ? -1 : 1) * (1 + (2.0 * (i % 128) + 1) * std::ldexp(1.0, -8)); }

tir::PrimFunc RoundingKernel() {
  using tir::DType;
  Buffer X = Flat("X", kN), O = Flat("O", 6 * kN);
  Var i = MakeVar("i");
  auto through = [](DType t, const Expr& e) { return Cast(DType::kFloat32, Cast(t, e)); };
  const Expr fi = Cast(DType::kFloat32, i);
  const Expr sign = Select(EQ(FloorMod(i, I(2)), I(1)), F(-1), F(1));
  const Expr tie16 = sign * (F(1) + (fi * F(2) + F(1)) * F(std::ldexp(1.0, -11)));
  const Expr sub16 = (fi * F(2) + F(1)) * F(std::ldexp(1.0, -25));
  const Expr tie_bf = sign * (F(1) + (Cast(DType::kFloat32, FloorMod(i, I(128))) * F(2) + F(1)) * F(std::ldexp(1.0, -8)));
  const Expr x = Load(X, {i});
  const Expr outs[] = {through(DType::kFloat16, tie16), through(DType::kFloat16, sub16) * F(std::ldexp(1.0, 14)),
                       through(DType::kBFloat16, tie_bf), through(DType::kFloat16, x),
                       through(DType::kBFloat16, x), through(DType::kFloat16, x * F(std::ldexp(1.0, -20))) * F(std::ldexp(1.0, 20))};
  std::vector<Stmt> stores;
  for (int k = 0; k < 6; ++k) stores.push_back(Store(O, outs[k], {i * 6 + k}));
  return tir::PrimFunc{"rounding", {X, O}, Loop(i, kN, Seq(stores))};
}

tir::Workload RoundingWorkload() {
  tir::Workload w;
  w.op = "rounding";
  w.inputs = {{"X", tir::DType::kFloat32, {kN}}};
  w.output = {"O", tir::DType::kFloat32, {6 * kN}};
  w.reference = [](const std::vector<const float*>& in, float* out) {
    auto f16 = [](double v) { return HalfBitsToFloat(FloatToHalfBits(static_cast<float>(v))); };
    auto bf16 = [](double v) { return BFloat16BitsToFloat(FloatToBFloat16Bits(static_cast<float>(v))); };
    for (int64_t i = 0; i < kN; ++i) {
      const float x = in[0][i];
      out[i * 6] = f16(TieF16(i));
      out[i * 6 + 1] = f16(SubnormalF16(i)) * std::ldexp(1.0f, 14);
      out[i * 6 + 2] = bf16(TieBF16(i));
      out[i * 6 + 3] = f16(x);
      out[i * 6 + 4] = bf16(x);
      out[i * 6 + 5] = f16(x * std::ldexp(1.0f, -20)) * std::ldexp(1.0f, 20);
    }
  };
  return w;
}

TEST(HalfConversionInC, RoundsAsTheHostAndTheGpu) {
  ExpectExactOnCPath(RoundingKernel(), RoundingWorkload(),
                     {"at_f32_to_f16(", "at_f16_to_f32(", "at_f32_to_bf16(", "at_bf16_to_f32("});
}

}  // namespace
}  // namespace autotune::measure

namespace autotune::measure {
namespace {

// A 16-bit output of several slices (WidenToFloat widens large ones in slices on every core) widens
// element by element as support/half.h does, up to its last element.
TEST(WidenToFloat, LargeOutputsWidenEveryElementOnce) {
  const int64_t n = 3 * (int64_t{1} << 20) + 7;
  for (tir::DType t : {tir::DType::kFloat16, tir::DType::kBFloat16}) {
    std::vector<uint16_t> bits(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) bits[static_cast<size_t>(i)] = static_cast<uint16_t>(i * 40503u);
    std::vector<float> values(static_cast<size_t>(n), -1.0f);
    WidenToFloat(bits.data(), n, t, values.data());
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t b = bits[static_cast<size_t>(i)];
      const float want = t == tir::DType::kFloat16 ? HalfBitsToFloat(b) : BFloat16BitsToFloat(b);
      const float got = values[static_cast<size_t>(i)];
      wrong += !(got == want || (std::isnan(got) && std::isnan(want)));
    }
    EXPECT_EQ(wrong, 0) << tir::DTypeName(t);
  }
}

}  // namespace
}  // namespace autotune::measure
