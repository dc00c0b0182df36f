#include <gtest/gtest.h>

#include <limits>

#include "tir/analysis/int_bound.h"
#include "tir/buffer.h"

namespace autotune::tir {
namespace {

constexpr int64_t kNegInf = IntBound::kNegInf;
constexpr int64_t kPosInf = IntBound::kPosInf;

class IntBoundTest : public ::testing::Test {
 protected:
  void SetUp() override {
    an.Bind(i, 0, 16);                   // [0, 15]
    an.Bind(j, IntBound{-4, 4});         // [-4, 4]
    an.Bind(n, IntBound{1, kPosInf});    // [1, +inf)
  }
  IntBound B(const Expr& e) { return an.Bound(e); }

  Var i = MakeVar("i"), j = MakeVar("j"), n = MakeVar("n"), u = MakeVar("u");
  BoundAnalyzer an;
};

TEST_F(IntBoundTest, ConstantsAndVars) {
  EXPECT_EQ(B(IntImm(7)), (IntBound{7, 7}));
  EXPECT_TRUE(B(IntImm(7)).IsConst());
  EXPECT_EQ(B(i), (IntBound{0, 15}));
  EXPECT_TRUE(B(u).IsUnknown());
  EXPECT_EQ(B(Bool(true)), (IntBound{1, 1}));
  EXPECT_EQ(B(MakeVar("flag", DType::kBool)), (IntBound{0, 1}));
  EXPECT_TRUE(B(FloatImm(1.0)).IsUnknown());
  EXPECT_TRUE(B(Load(MakeBuffer("A", DType::kInt32, {IntImm(4)}), {i})).IsUnknown());
  an.Unbind(i);
  EXPECT_TRUE(B(i).IsUnknown());
  an.Bind(i, 3, 0);  // an empty range binds the var to its min
  EXPECT_EQ(B(i), (IntBound{3, 3}));
}

TEST_F(IntBoundTest, Arithmetic) {
  EXPECT_EQ(B(i + j), (IntBound{-4, 19}));
  EXPECT_EQ(B(i - j), (IntBound{-4, 19}));
  EXPECT_EQ(B(i * j), (IntBound{-60, 60}));
  EXPECT_EQ(B(i * -2), (IntBound{-30, 0}));
  EXPECT_EQ(B(i + n), (IntBound{1, kPosInf}));
  EXPECT_EQ(B(i - n), (IntBound{kNegInf, 14}));
  EXPECT_EQ(B(n * -1), (IntBound{kNegInf, -1}));
  EXPECT_EQ(B(n * 0), (IntBound{0, 0}));
  EXPECT_TRUE(B(i + u).IsUnknown());
}

TEST_F(IntBoundTest, DivMod) {
  EXPECT_EQ(B(FloorDiv(i, IntImm(4))), (IntBound{0, 3}));
  EXPECT_EQ(B(FloorDiv(j, IntImm(4))), (IntBound{-1, 1}));
  EXPECT_EQ(B(FloorDiv(j, IntImm(-2))), (IntBound{-2, 2}));
  EXPECT_EQ(B(FloorDiv(n, IntImm(2))), (IntBound{0, kPosInf}));
  EXPECT_EQ(B(FloorDiv(i, n)), (IntBound{0, 15}));
  EXPECT_TRUE(B(FloorDiv(i, j)).IsUnknown());  // the divisor's range contains 0
  EXPECT_TRUE(B(FloorDiv(i, IntImm(0))).IsUnknown());
  EXPECT_EQ(B(FloorMod(u, IntImm(8))), (IntBound{0, 7}));
  EXPECT_EQ(B(FloorMod(i, IntImm(32))), (IntBound{0, 15}));
  EXPECT_EQ(B(FloorMod(i + 16, IntImm(32))), (IntBound{16, 31}));  // within one period
  EXPECT_EQ(B(FloorMod(j, IntImm(8))), (IntBound{0, 7}));          // spans two periods
  EXPECT_EQ(B(FloorMod(i, IntImm(4))), (IntBound{0, 3}));
  EXPECT_EQ(B(FloorMod(u, IntImm(-4))), (IntBound{-3, 0}));
  EXPECT_EQ(B(FloorMod(i, n)), (IntBound{0, 15}));
}

TEST_F(IntBoundTest, MinMaxSelectCompare) {
  EXPECT_EQ(B(Min(i, j)), (IntBound{-4, 4}));
  EXPECT_EQ(B(Max(i, j)), (IntBound{0, 15}));
  EXPECT_EQ(B(Min(i, IntImm(8))), (IntBound{0, 8}));
  EXPECT_EQ(B(Select(LT(u, IntImm(0)), i, j)), (IntBound{-4, 15}));
  EXPECT_EQ(B(Select(LT(i, IntImm(16)), i, j)), (IntBound{0, 15}));  // decided condition
  EXPECT_EQ(B(LT(i, IntImm(16))), (IntBound{1, 1}));
  EXPECT_EQ(B(LT(i, IntImm(15))), (IntBound{0, 1}));
  EXPECT_EQ(B(GE(i, IntImm(16))), (IntBound{0, 0}));
  EXPECT_EQ(B(LE(j, IntImm(4))), (IntBound{1, 1}));
  EXPECT_EQ(B(GT(n, IntImm(0))), (IntBound{1, 1}));
  EXPECT_EQ(B(EQ(i, IntImm(20))), (IntBound{0, 0}));
  EXPECT_EQ(B(NE(i, IntImm(20))), (IntBound{1, 1}));
  EXPECT_EQ(B(EQ(i, u)), (IntBound{0, 1}));
  EXPECT_EQ(B(Not(LT(i, IntImm(16)))), (IntBound{0, 0}));
  EXPECT_EQ(B(And(LT(i, IntImm(16)), LT(u, IntImm(3)))), (IntBound{0, 1}));
  EXPECT_EQ(B(Or(LT(i, IntImm(16)), LT(u, IntImm(3)))), (IntBound{1, 1}));
  Var x = MakeVar("x", DType::kFloat32);
  EXPECT_EQ(B(LT(x, FloatImm(1.0))), (IntBound{0, 1}));
}

TEST_F(IntBoundTest, Casts) {
  EXPECT_EQ(B(Cast(DType::kInt64, i)), (IntBound{0, 15}));
  EXPECT_EQ(B(Cast(DType::kInt64, u)), (IntBound{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}));
  Var big = MakeVar("big", DType::kInt64);
  an.Bind(big, IntBound{0, int64_t{1} << 40});
  EXPECT_EQ(B(Cast(DType::kInt32, big)), (IntBound{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}));
  EXPECT_EQ(B(Cast(DType::kInt32, MakeVar("b", DType::kBool))), (IntBound{0, 1}));
  EXPECT_EQ(B(Cast(DType::kInt32, MakeVar("f", DType::kFloat32))),
            (IntBound{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}));
}

TEST_F(IntBoundTest, SaturatesInsteadOfOverflowing) {
  Var big = MakeVar("big", DType::kInt64);
  an.Bind(big, IntBound{0, std::numeric_limits<int64_t>::max() / 2 + 1});
  IntBound b = B(big * 4);
  EXPECT_EQ(b.min, 0);
  EXPECT_EQ(b.max, kPosInf);
  EXPECT_EQ(B(big + big + big).max, kPosInf);
  EXPECT_EQ(B(IntImm(0, DType::kInt64) - big * 4).min, kNegInf);
  IntBound neg = B(big * IntImm(std::numeric_limits<int64_t>::min() + 1, DType::kInt64));
  EXPECT_EQ(neg.min, kNegInf);
  EXPECT_EQ(neg.max, 0);
  an.Bind(big, IntBound::Unknown());
  EXPECT_TRUE(B(big * big).IsUnknown());
  EXPECT_TRUE(B(big - big).IsUnknown());
}

}  // namespace
}  // namespace autotune::tir
