#include <gtest/gtest.h>

#include <cstdint>
#include <unordered_map>

#include "tir/expr.h"
#include "tir/printer.h"
#include "tir/transform/simplify.h"
#include "tir/transform/substitute.h"

namespace autotune::tir::combine_div_mod_test {
namespace {

Expr I(int64_t v) { return IntImm(v); }

// The coefficient of `v` in `sum` (0 when it has no term of its own).
int64_t CoeffOf(const LinearSum& sum, const Var& v) {
  for (const auto& t : sum.terms) {
    if (t.expr.get() == v.get()) return t.coeff;
  }
  return 0;
}

// The value of a linear form, or of an expression, at i = vi, j = vj.
int64_t At(const Expr& e, const Var& i, const Var& j, int64_t vi, int64_t vj) {
  std::unordered_map<const VarNode*, Expr> values{{i.get(), I(vi)}, {j.get(), I(vj)}};
  const Expr r = Simplify(Substitute(e, values));
  const int64_t* c = AsConstInt(r);
  EXPECT_NE(c, nullptr) << ToString(r);
  return c ? *c : 0;
}
int64_t At(const LinearSum& sum, const Var& i, const Var& j, int64_t vi, int64_t vj) {
  int64_t v = sum.constant;
  for (const auto& t : sum.terms) v += t.coeff * At(t.expr, i, j, vi, vj);
  return v;
}

LinearSum Combined(const Expr& e) {
  LinearSum sum = ToLinear(e);
  CombineDivMod(&sum);
  return sum;
}

TEST(CombineDivMod, PutsAnIndexSplitByDivAndModBackTogether) {
  Var i = MakeVar("i"), j = MakeVar("j");
  const Expr x = Add(Mul(i, I(4)), j);
  // 3*7 * floordiv(x, 7) + 3 * floormod(x, 7) + 5 is 3x + 5 = 12i + 3j + 5.
  const Expr e = Add(Add(Mul(FloorDiv(x, I(7)), I(21)), Mul(FloorMod(x, I(7)), I(3))), I(5));
  const LinearSum sum = Combined(e);
  ASSERT_TRUE(sum.ok);
  EXPECT_EQ(sum.terms.size(), 2u);
  EXPECT_EQ(CoeffOf(sum, i), 12);
  EXPECT_EQ(CoeffOf(sum, j), 3);
  EXPECT_EQ(sum.constant, 5);
}

TEST(CombineDivMod, ThreeLevelsOfAConvolutionRow) {
  // A convolution's row m as (image, pixel row, pixel column) of 14x14 images, times a stride of 8:
  // (floordiv(m, 196) * 196 + floormod(floordiv(m, 14), 14) * 14 + floormod(m, 14)) * 8 = 8m.
  Var i = MakeVar("i"), j = MakeVar("j");
  const Expr m = Add(Mul(i, I(16)), j);
  const Expr row = Add(Add(Mul(FloorDiv(m, I(196)), I(196)), Mul(FloorMod(FloorDiv(m, I(14)), I(14)), I(14))),
                       FloorMod(m, I(14)));
  const LinearSum sum = Combined(Mul(row, I(8)));
  ASSERT_TRUE(sum.ok);
  EXPECT_EQ(sum.terms.size(), 2u);
  EXPECT_EQ(CoeffOf(sum, i), 128);
  EXPECT_EQ(CoeffOf(sum, j), 8);
}

TEST(CombineDivMod, LeavesPartsThatDoNotMakeAWholeAlone) {
  Var i = MakeVar("i"), j = MakeVar("j");
  const Expr x = Add(i, j);
  const Expr cases[] = {
      Add(Mul(FloorDiv(x, I(7)), I(8)), FloorMod(x, I(7))),         // floordiv's coefficient not 7
      Add(Mul(FloorDiv(x, I(7)), I(7)), FloorMod(x, I(6))),         // other divisors
      Add(Mul(FloorDiv(x, I(7)), I(7)), FloorMod(Add(x, I(1)), I(7))),  // other dividends
      Add(Mul(FloorDiv(x, I(-7)), I(-7)), FloorMod(x, I(-7))),      // a negative divisor
  };
  for (const Expr& e : cases) {
    const LinearSum before = ToLinear(e);
    const LinearSum after = Combined(e);
    EXPECT_EQ(after.terms.size(), before.terms.size()) << ToString(e);
  }
}

TEST(CombineDivMod, EqualsTheSumForNegativeValuesToo) {
  // floordiv and floormod round toward minus infinity, so the identities hold for every x.
  Var i = MakeVar("i"), j = MakeVar("j");
  const Expr m = Sub(Mul(i, I(5)), j);
  const Expr e = Add(Add(Mul(FloorDiv(m, I(12)), I(36)), Mul(FloorMod(FloorDiv(m, I(3)), I(4)), I(9))),
                     Add(Mul(FloorMod(m, I(3)), I(3)), Mul(j, I(2))));
  const LinearSum sum = Combined(e);
  ASSERT_TRUE(sum.ok);
  EXPECT_EQ(CoeffOf(sum, i), 15);  // 3m + 2j = 15i - j
  EXPECT_EQ(CoeffOf(sum, j), -1);
  for (int64_t vi = -9; vi <= 9; ++vi) {
    for (int64_t vj = -7; vj <= 7; ++vj) EXPECT_EQ(At(sum, i, j, vi, vj), At(e, i, j, vi, vj)) << vi << " " << vj;
  }
}

}  // namespace
}  // namespace autotune::tir::combine_div_mod_test
