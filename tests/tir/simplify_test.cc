#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "tir/analysis/int_bound.h"
#include "tir/buffer.h"
#include "tir/printer.h"
#include "tir/stmt.h"
#include "tir/structural_equal.h"
#include "tir/transform/simplify.h"

namespace autotune::tir {
namespace {

Expr I(int64_t v) { return IntImm(v); }
Expr F(double v) { return FloatImm(v); }

class SimplifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    an.Bind(i, 0, 128);  // i in [0, 127]
    an.Bind(j, 0, 16);   // j in [0, 15]
  }
  // Simplified text, checking on the way that simplifying the result again changes nothing.
  std::string S(const Expr& e) {
    Expr r = Simplify(e, &an);
    Expr again = Simplify(r, &an);
    EXPECT_TRUE(ExprDeepEqual(r, again)) << ToString(r) << " -> " << ToString(again);
    return ToString(r);
  }
  std::string S(const Stmt& s) {
    Stmt r = Simplify(s);
    Stmt again = Simplify(r);
    EXPECT_TRUE(StructuralEqual(r, again)) << ToString(r) << "-> \n" << ToString(again);
    return ToString(r);
  }

  Var i = MakeVar("i"), j = MakeVar("j"), x = MakeVar("x"), y = MakeVar("y");
  Var c = MakeVar("c", DType::kBool), d = MakeVar("d", DType::kBool);
  Var f = MakeVar("f", DType::kFloat32);
  BoundAnalyzer an;
};

// ---- Constant folding ---------------------------------------------------------------------------

TEST_F(SimplifyTest, FoldsIntegerConstants) {
  EXPECT_EQ(S(I(3) + I(4)), "7");
  EXPECT_EQ(S(I(7) - I(10)), "-3");
  EXPECT_EQ(S(I(6) * I(7)), "42");
  EXPECT_EQ(S(IntImm(6, DType::kInt64) * IntImm(7, DType::kInt64)), "42i64");
  EXPECT_EQ(S(FloorDiv(I(-7), I(2))), "-4");
  EXPECT_EQ(S(FloorMod(I(-7), I(2))), "1");
  EXPECT_EQ(S(FloorDiv(I(7), I(-2))), "-4");
  EXPECT_EQ(S(FloorMod(I(7), I(-2))), "-1");
  EXPECT_EQ(S(FloorDiv(I(-8), I(2))), "-4");
  EXPECT_EQ(S(Min(I(3), I(-2))), "-2");
  EXPECT_EQ(S(Max(I(3), I(-2))), "3");
  EXPECT_EQ(S(LT(I(3), I(4))), "true");
  EXPECT_EQ(S(GE(I(3), I(4))), "false");
  EXPECT_EQ(S(EQ(I(3), I(3))), "true");
  EXPECT_EQ(S(NE(I(3), I(3))), "false");
  EXPECT_EQ(S(LE(I(3), I(3))), "true");
  EXPECT_EQ(S(GT(I(3), I(3))), "false");
  EXPECT_EQ(S(And(Bool(true), Bool(false))), "false");
  EXPECT_EQ(S(Or(Bool(true), Bool(false))), "true");
  EXPECT_EQ(S(Not(Bool(true))), "false");
  EXPECT_EQ(S(Select(LT(I(1), I(2)), I(10), I(20))), "10");
  EXPECT_EQ(S(Cast(DType::kInt64, I(5))), "5i64");
  EXPECT_EQ(S(Cast(DType::kFloat32, I(3))), "3f");
  EXPECT_EQ(S(Cast(DType::kInt32, F(-2.75))), "-2");  // truncation toward zero
  EXPECT_EQ(S(Cast(DType::kBool, I(2))), "true");
}

TEST_F(SimplifyTest, NeverFoldsDivisionByZeroOrOverflow) {
  EXPECT_EQ(S(FloorDiv(I(5), I(0))), "floordiv(5, 0)");
  EXPECT_EQ(S(FloorMod(I(5), I(0))), "floormod(5, 0)");
  EXPECT_EQ(S(FloorDiv(x, I(0))), "floordiv(x, 0)");
  EXPECT_EQ(S(Div(F(1.0), F(0.0))), "(1f / 0f)");
  int64_t max32 = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(S(I(max32) + I(1)), "(2147483647 + 1)");
  EXPECT_EQ(S(Cast(DType::kInt32, IntImm(int64_t{1} << 40, DType::kInt64))), "cast<int32>(1099511627776i64)");
}

TEST_F(SimplifyTest, FoldsFloatConstantsOnly) {
  EXPECT_EQ(S(F(1.5) + F(2.25)), "3.75f");
  EXPECT_EQ(S(Div(F(1.0), F(4.0))), "0.25f");
  // float32 arithmetic happens in float precision.
  Expr sum = Simplify(F(0.1f) + F(0.2f));
  ASSERT_NE(As<FloatImmNode>(sum), nullptr);
  EXPECT_EQ(As<FloatImmNode>(sum)->value, static_cast<double>(0.1f + 0.2f));
  EXPECT_EQ(S(FloatImm(0.1, DType::kFloat64) + FloatImm(0.2, DType::kFloat64)), "0.30000000000000004f64");
  EXPECT_EQ(S(LT(F(1.0), F(2.0))), "true");
  EXPECT_EQ(S(Min(F(1.0), F(2.0))), "1f");
  EXPECT_EQ(S(f * F(1.0)), "f");
  EXPECT_EQ(S(Div(f, F(1.0))), "f");
  // Not reassociated, and no identity that is inexact for floats.
  EXPECT_EQ(S((f + F(1.0)) + F(2.0)), "((f + 1f) + 2f)");
  EXPECT_EQ(S(f + F(0.0)), "(f + 0f)");
  EXPECT_EQ(S(f - f), "(f - f)");
  EXPECT_EQ(S(f * F(0.0)), "(f * 0f)");
  EXPECT_EQ(S(Not(LT(f, F(1.0)))), "!(f < 1f)");  // NaN makes this differ from f >= 1
  EXPECT_EQ(S(Not(EQ(f, F(1.0)))), "(f != 1f)");
  // Integer parts inside float expressions are simplified.
  Buffer a = MakeBuffer("A", DType::kFloat32, {I(64)});
  EXPECT_EQ(S(Load(a, {(x + 1) - 1}) * F(2.0)), "(A[x] * 2f)");
}

// ---- Identities ----------------------------------------------------------------------------------

TEST_F(SimplifyTest, Identities) {
  EXPECT_EQ(S(x + 0), "x");
  EXPECT_EQ(S(I(0) + x), "x");
  EXPECT_EQ(S(x - 0), "x");
  EXPECT_EQ(S(x * 1), "x");
  EXPECT_EQ(S(I(1) * x), "x");
  EXPECT_EQ(S(x * 0), "0");
  EXPECT_EQ(S(x - x), "0");
  EXPECT_EQ(S(Min(x, x)), "x");
  EXPECT_EQ(S(Max(x + 1, x + 1)), "(x + 1)");
  EXPECT_EQ(S(Select(Bool(true), x, y)), "x");
  EXPECT_EQ(S(Select(Bool(false), x, y)), "y");
  EXPECT_EQ(S(Select(c, x, x)), "x");
  EXPECT_EQ(S(And(Bool(true), c)), "c");
  EXPECT_EQ(S(And(c, Bool(true))), "c");
  EXPECT_EQ(S(And(c, Bool(false))), "false");
  EXPECT_EQ(S(Or(Bool(false), c)), "c");
  EXPECT_EQ(S(Or(c, Bool(true))), "true");
  EXPECT_EQ(S(And(c, c)), "c");
  EXPECT_EQ(S(Not(Not(c))), "c");
  EXPECT_EQ(S(Not(LT(x, y))), "(x >= y)");
  EXPECT_EQ(S(EQ(c, c)), "true");
  EXPECT_EQ(S(FloorDiv(x, I(1))), "x");
  EXPECT_EQ(S(FloorMod(x, I(1))), "0");
  EXPECT_EQ(S(Cast(DType::kInt32, Cast(DType::kInt64, x))), "x");
  EXPECT_EQ(S(Cast(DType::kInt64, Cast(DType::kInt32, MakeVar("w", DType::kInt64)))), "cast<int64>(cast<int32>(w))");
}

// ---- Linear canonical form -----------------------------------------------------------------------

TEST_F(SimplifyTest, LinearCanonicalization) {
  EXPECT_EQ(S((x * 4 + y) - x * 4), "y");
  EXPECT_EQ(S((x + 1) - 1), "x");
  EXPECT_EQ(S(x * 8 + I(4) * x), "(x * 12)");
  EXPECT_EQ(S((x + 2) * 3), "((x * 3) + 6)");
  EXPECT_EQ(S(((y + 3) + x) + y), "(((y * 2) + x) + 3)");  // first appearance order, constant last
  EXPECT_EQ(S((I(5) + x) - (y + 7)), "((x - y) - 2)");
  EXPECT_EQ(S(I(0) - y + x), "((y * -1) + x)");
  EXPECT_EQ(S((x - y) * -2), "((x * -2) + (y * 2))");
  EXPECT_EQ(S((x * y) + (x * y)), "((x * y) * 2)");  // non-linear products are terms
  EXPECT_EQ(S((x + 1) * (y + 1)), "((x + 1) * (y + 1))");  // never distributed
  EXPECT_EQ(S(Min(x, y) + 1 - Min(x, y)), "1");
  EXPECT_EQ(S(IntImm(3, DType::kInt64) + MakeVar("w", DType::kInt64) - IntImm(3, DType::kInt64)), "w");
}

// ---- Division and modulo -------------------------------------------------------------------------

TEST_F(SimplifyTest, DivModWithRanges) {
  EXPECT_EQ(S(FloorDiv(j, I(16))), "0");
  EXPECT_EQ(S(FloorMod(j, I(16))), "j");
  EXPECT_EQ(S(FloorDiv(j, I(8))), "floordiv(j, 8)");
  EXPECT_EQ(S(FloorDiv(i * 16 + j, I(16))), "i");
  EXPECT_EQ(S(FloorMod(i * 16 + j, I(16))), "j");
  EXPECT_EQ(S(FloorMod(i * 16, I(16))), "0");
  EXPECT_EQ(S(FloorMod(x * 16, I(16))), "0");
  EXPECT_EQ(S(FloorDiv(x * 16 + 5, I(16))), "x");
  EXPECT_EQ(S(FloorDiv(x * 16 + y, I(16))), "(x + floordiv(y, 16))");
  EXPECT_EQ(S(FloorMod(x * 16 + y, I(16))), "floormod(y, 16)");
  EXPECT_EQ(S(FloorDiv(x + 17, I(16))), "(floordiv((x + 1), 16) + 1)");
  EXPECT_EQ(S(FloorDiv(x - 1, I(16))), "floordiv((x - 1), 16)");
  EXPECT_EQ(S(FloorMod(x + 17, I(16))), "floormod((x + 1), 16)");
  EXPECT_EQ(S(FloorDiv(j + 16, I(16))), "1");
  EXPECT_EQ(S(FloorMod(j + 32, I(16))), "j");
  EXPECT_EQ(S(FloorMod(j - 16, I(16))), "j");
  EXPECT_EQ(S(FloorDiv(i, I(4)) * 4 + FloorMod(i, I(4))), "i");  // split then fuse
  EXPECT_EQ(S(FloorMod(x, I(8)) + FloorDiv(x, I(8)) * 8), "x");
  EXPECT_EQ(S(FloorDiv(x, I(4)) * 8 + FloorMod(x, I(4)) * 2 + 1), "((x * 2) + 1)");
  // The digits of a mixed-radix split (2 x 2 x 14 x 7) put back together are the number itself.
  EXPECT_EQ(S(FloorDiv(x, I(196)) * 196 + FloorMod(FloorDiv(x, I(98)), I(2)) * 98 +
              FloorMod(FloorDiv(x, I(7)), I(14)) * 7 + FloorMod(x, I(7))),
            "x");
  EXPECT_EQ(S(FloorMod(FloorDiv(x, I(7)), I(14)) * 14 + FloorMod(x, I(7)) * 2 + y), "((floormod(x, 98) * 2) + y)");
  // The same digits of floordiv(x, 7): the simplifier writes floordiv(floordiv(x, 7), 28) as floordiv(x, 196).
  EXPECT_EQ(S(FloorDiv(x, I(196)) * 28 + FloorMod(FloorDiv(x, I(98)), I(2)) * 14 + FloorMod(FloorDiv(x, I(7)), I(14))),
            "floordiv(x, 7)");
  // Not when a coefficient does not match the digit's weight.
  EXPECT_EQ(S(FloorMod(FloorDiv(x, I(7)), I(14)) * 6 + FloorMod(x, I(7))),
            "((floormod(floordiv(x, 7), 14) * 6) + floormod(x, 7))");
}

TEST_F(SimplifyTest, DivModStructure) {
  EXPECT_EQ(S(FloorDiv(FloorDiv(x, I(4)), I(8))), "floordiv(x, 32)");
  EXPECT_EQ(S(FloorDiv(FloorDiv(i, I(4)), I(8))), "floordiv(i, 32)");
  EXPECT_EQ(S(FloorDiv(FloorDiv(j, I(4)), I(8))), "0");
  EXPECT_EQ(S(FloorMod(FloorMod(x, I(8)), I(4))), "floormod(x, 4)");
  EXPECT_EQ(S(FloorMod(FloorMod(x, I(6)), I(4))), "floormod(floormod(x, 6), 4)");
  EXPECT_EQ(S(FloorDiv(x * 4, I(2))), "(x * 2)");
  EXPECT_EQ(S(FloorDiv(x * 2, I(4))), "floordiv(x, 2)");
  EXPECT_EQ(S(FloorMod(x * 2, I(4))), "(floormod(x, 2) * 2)");
  EXPECT_EQ(S(FloorDiv(x * 6 + 3, I(9))), "floordiv(((x * 2) + 1), 3)");
  EXPECT_EQ(S(FloorDiv(FloorDiv(x, I(4)) + 8, I(8))), "(floordiv(x, 32) + 1)");
  // Negative or symbolic divisors are left alone (only constants fold).
  EXPECT_EQ(S(FloorDiv(x, I(-4))), "floordiv(x, -4)");
  EXPECT_EQ(S(FloorDiv(x, y)), "floordiv(x, y)");
  EXPECT_EQ(S(FloorMod(j, i + 16)), "j");  // 0 <= j < i + 16
}

// ---- Comparisons, min and max --------------------------------------------------------------------

TEST_F(SimplifyTest, VectorLaneStaysLinearUnderDivMod) {
  Var lane = MakeVar("lane");
  an.Bind(lane, 0, 4);
  // floormod(i * 4 + lane, 8) = floormod(i, 2) * 4 + lane: the lane stays a plain term.
  EXPECT_EQ(S(FloorMod(Add(Mul(i, I(4)), lane), I(8))), "((floormod(i, 2) * 4) + lane)");
  EXPECT_EQ(S(FloorDiv(Add(Mul(i, I(4)), lane), I(8))), "floordiv(i, 2)");
  // Not when the fine part can reach the next multiple.
  EXPECT_EQ(S(FloorMod(Add(Mul(i, I(4)), j), I(8))), "floormod(((i * 4) + j), 8)");
  an.Unbind(lane);
}

TEST_F(SimplifyTest, ComparisonsDecidedByBounds) {
  EXPECT_EQ(S(LT(i, I(128))), "true");
  EXPECT_EQ(S(LT(i, I(127))), "(i < 127)");
  EXPECT_EQ(S(GE(i, I(0))), "true");
  EXPECT_EQ(S(GT(i, I(127))), "false");
  EXPECT_EQ(S(LT(i * 16 + j, I(2048))), "true");
  EXPECT_EQ(S(EQ(j, I(16))), "false");
  EXPECT_EQ(S(NE(j, I(-1))), "true");
  EXPECT_EQ(S(LT(j, i + 16)), "true");
  EXPECT_EQ(S(LT(x - x, I(1))), "true");
  EXPECT_EQ(S(LE(x + 1, x)), "false");
  EXPECT_EQ(S(And(LT(i, I(128)), LT(x, I(7)))), "(x < 7)");
  EXPECT_EQ(S(Or(LT(i, I(0)), LT(x, I(7)))), "(x < 7)");
}

TEST_F(SimplifyTest, ComparisonCanonicalForm) {
  EXPECT_EQ(S(LT(x + 1, I(10))), "(x < 9)");
  EXPECT_EQ(S(LT(I(10), x + 1)), "(9 < x)");
  EXPECT_EQ(S(LT(x * 4, I(16))), "(x < 4)");
  EXPECT_EQ(S(LT(x * 4, I(15))), "(x < 4)");
  EXPECT_EQ(S(LE(x * 4, I(15))), "(x <= 3)");
  EXPECT_EQ(S(GT(x * 4, I(15))), "(x > 3)");
  EXPECT_EQ(S(GE(x * 4, I(15))), "(x >= 4)");
  EXPECT_EQ(S(EQ(x * 2, I(3))), "false");
  EXPECT_EQ(S(NE(x * 2, I(3))), "true");
  EXPECT_EQ(S(EQ(x * 2, I(6))), "(x == 3)");
  EXPECT_EQ(S(LT(x, y)), "(x < y)");
  EXPECT_EQ(S(LT(x + 2, y + 3)), "(x < (y + 1))");
  EXPECT_EQ(S(LT(x + 3, y + 2)), "((x + 1) < y)");
  EXPECT_EQ(S(LT(x * 4 + y, x * 4 + 8)), "(y < 8)");
  EXPECT_EQ(S(LT(x - y, I(0))), "(x < y)");
}

TEST_F(SimplifyTest, MinMax) {
  EXPECT_EQ(S(Min(i, I(200))), "i");
  EXPECT_EQ(S(Max(i, I(0))), "i");
  EXPECT_EQ(S(Min(i, I(64))), "min(i, 64)");
  EXPECT_EQ(S(Max(j, I(100))), "100");
  EXPECT_EQ(S(Min(x + 4, x + 2)), "(x + 2)");
  EXPECT_EQ(S(Max(x + 4, x + 2)), "(x + 4)");
  EXPECT_EQ(S(Min(x, y)), "min(x, y)");
  EXPECT_EQ(S(Min(I(32), I(1000) - i * 32)), "min(32, ((i * -32) + 1000))");
}

TEST_F(SimplifyTest, VariablesWithOneValue) {
  Var k = MakeVar("k");
  an.Bind(k, 5, 1);
  EXPECT_EQ(S(k * 2 + x), "(x + 10)");
}

// A sum is not bounded for folding while a variable term of it ranges; a ranging variable under a
// division that takes it to one value is not such a term, and the sum still folds.
TEST_F(SimplifyTest, SumFoldsWhereARangingVariableIsDividedAway) {
  Var k = MakeVar("k");
  an.Bind(k, 4, 1);
  EXPECT_EQ(S(FloorDiv(j, I(16)) + k * 2), "8");
  EXPECT_EQ(S(k * 3 - FloorMod(i, I(1)) * 5), "12");
  EXPECT_EQ(S(FloorDiv(j, I(16)) + j), "j");
}

TEST_F(SimplifyTest, ReduceBindsItsAxes) {
  Var k = MakeVar("k");
  Buffer a = MakeBuffer("A", DType::kFloat32, {I(8)});
  EXPECT_EQ(S(Reduce(ReduceOp::kSum, Load(a, {FloorMod(k, I(8))}), {k}, {I(4) + I(4)})), "sum(A[k], axis=[k: 0..8])");
}

TEST_F(SimplifyTest, KeepsUnchangedNodes) {
  Expr e = FloorDiv(x, I(8)) + y * 3;
  EXPECT_EQ(Simplify(e), e);
  Buffer a = MakeBuffer("A", DType::kFloat32, {I(128)});
  Stmt s = For(i, I(0), I(128), ForKind::kSerial, Store(a, F(1.0), {i}));
  EXPECT_EQ(Simplify(s), s);
}

// ---- Statements ----------------------------------------------------------------------------------

TEST_F(SimplifyTest, LoopsBindTheirVariables) {
  Var io = MakeVar("io"), ii = MakeVar("ii");
  Buffer a = MakeBuffer("A", DType::kFloat32, {I(128)});
  Expr idx = io * 16 + ii;
  Stmt s = For(io, I(0), I(8), ForKind::kSerial,
               For(ii, I(0), I(16), ForKind::kSerial,
                   IfThenElse(LT(idx, I(128)), Store(a, Load(a, {FloorMod(idx, I(16)) + FloorDiv(idx, I(16)) * 16}), {idx}))));
  EXPECT_EQ(S(s),
            "for (io: int32, 0, 8) serial {\n"
            "  for (ii: int32, 0, 16) serial {\n"
            "    A[((io * 16) + ii)] = A[(ii + (io * 16))]\n"
            "  }\n"
            "}\n");
}

// One node used under different bindings (the simplifier memoizes shared nodes) is simplified under
// each: inside the loop k / 8 is 0, after it k is unbound, in the one-iteration loop k is 9.
TEST_F(SimplifyTest, SharedNodeFollowsEachScopesBindings) {
  Var k = MakeVar("k");
  Buffer a = MakeBuffer("A", DType::kInt32, {I(64)});
  Expr shared = FloorDiv(k, I(8)) + FloorMod(k, I(8));
  Stmt s = Seq({
      For(k, I(0), I(4), ForKind::kSerial, Store(a, shared, {shared})),
      Store(a, shared, {shared}),
      For(k, I(9), I(1), ForKind::kSerial, Store(a, shared, {shared})),
      IfThenElse(LT(k, I(8)), Store(a, shared, {I(0)})),
  });
  EXPECT_EQ(S(s),
            "for (k: int32, 0, 4) serial {\n"
            "  A[k] = k\n"
            "}\n"
            "A[(floordiv(k, 8) + floormod(k, 8))] = (floordiv(k, 8) + floormod(k, 8))\n"
            "A[2] = 2\n"
            "if (k < 8) {\n"
            "  A[0] = (floordiv(k, 8) + floormod(k, 8))\n"
            "}\n");
}

TEST_F(SimplifyTest, PartialTilesKeepTheirGuard) {
  Var io = MakeVar("io"), ii = MakeVar("ii");
  Buffer a = MakeBuffer("A", DType::kFloat32, {I(100)});
  Expr idx = io * 16 + ii;
  Stmt s = For(io, I(0), I(7), ForKind::kSerial,
               For(ii, I(0), I(16), ForKind::kSerial,
                   IfThenElse(And(LT(idx, I(100)), GE(ii, I(0))), Store(a, F(0.0), {idx}))));
  EXPECT_EQ(S(s),
            "for (io: int32, 0, 7) serial {\n"
            "  for (ii: int32, 0, 16) serial {\n"
            "    if (((io * 16) + ii) < 100) {\n"
            "      A[((io * 16) + ii)] = 0f\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST_F(SimplifyTest, RemovesTrivialLoops) {
  Var k = MakeVar("k"), e = MakeVar("e"), tx = MakeVar("tx"), n = MakeVar("n");
  Buffer a = MakeBuffer("A", DType::kInt32, {I(64)});
  Stmt s = Seq({
      For(k, I(3), I(1), ForKind::kSerial, Store(a, k + 1, {k})),               // one iteration: inlined
      For(e, I(0), I(0), ForKind::kSerial, Store(a, e, {e})),                   // no iteration: removed
      For(e, I(0), I(4) - I(5), ForKind::kUnrolled, Store(a, e, {e})),          // negative: removed
      For(tx, I(0), I(1), ForKind::kThreadBinding, Store(a, tx, {tx}), ThreadTag::kThreadIdxX),  // kept
      For(n, I(0), I(1), ForKind::kSerial, Store(a, n, {n}), ThreadTag::kNone, 16),  // pragma kept
  });
  EXPECT_EQ(S(s),
            "A[3] = 4\n"
            "for (tx: int32, 0, 1) thread_binding \"threadIdx.x\" {\n"
            "  A[0] = 0\n"
            "}\n"
            "for (n: int32, 0, 1) serial auto_unroll_max_step=16 {\n"
            "  A[0] = 0\n"
            "}\n");
}

TEST_F(SimplifyTest, ConditionsAndEmptyStatements) {
  Var k = MakeVar("k"), m = MakeVar("m");
  Buffer a = MakeBuffer("A", DType::kInt32, {I(64)});
  Stmt st = Store(a, I(1), {k});
  Stmt s = For(k, I(0), I(64), ForKind::kSerial,
               Seq({IfThenElse(LT(k, I(64)), st, Store(a, I(2), {k})),   // always true
                    IfThenElse(GE(k, I(64)), st),                          // always false, no else
                    IfThenElse(GE(k, I(64)), st, Store(a, I(3), {k})),     // always false: the else
                    IfThenElse(LT(k, m), Seq({}), Store(a, I(4), {k})),    // empty then: inverted
                    IfThenElse(LT(k, I(10)), IfThenElse(LT(k, I(20)), Store(a, I(5), {k}))),  // refined
                    IfThenElse(LT(k, I(10)), Store(a, I(6), {k}), IfThenElse(GE(k, I(10)), Store(a, I(7), {k}))),
                    For(m, I(0), I(4), ForKind::kSerial, Seq({})),         // empty body
                    Allocate(MakeBuffer("t", DType::kInt32, {I(4)}, Scope::kLocal), Seq({}))}));
  EXPECT_EQ(S(s),
            "for (k: int32, 0, 64) serial {\n"
            "  A[k] = 1\n"
            "  A[k] = 3\n"
            "  if (k >= m) {\n"
            "    A[k] = 4\n"
            "  }\n"
            "  if (k < 10) {\n"
            "    A[k] = 5\n"
            "  }\n"
            "  if (k < 10) {\n"
            "    A[k] = 6\n"
            "  } else {\n"
            "    A[k] = 7\n"
            "  }\n"
            "}\n");
  // Everything removed: an empty Seq.
  Stmt gone = Simplify(For(k, I(0), I(64), ForKind::kSerial, IfThenElse(LT(k, I(0)), st)));
  ASSERT_NE(As<SeqNode>(gone), nullptr);
  EXPECT_TRUE(As<SeqNode>(gone)->stmts.empty());
}

TEST_F(SimplifyTest, ThreadLoopsWithSymbolicExtent) {
  Var bx = MakeVar("bx"), tx = MakeVar("tx"), n = MakeVar("n");
  Buffer a = MakeBuffer("A", DType::kInt32, {n});
  Stmt s = For(bx, I(0), FloorDiv(n + 63, I(64)), ForKind::kThreadBinding,
               For(tx, I(0), I(64), ForKind::kThreadBinding,
                   IfThenElse(And(GE(tx, I(0)), LT(bx * 64 + tx, n)), Store(a, FloorMod(tx, I(64)), {bx * 64 + tx})),
                   ThreadTag::kThreadIdxX),
               ThreadTag::kBlockIdxX);
  EXPECT_EQ(S(s),
            "for (bx: int32, 0, floordiv((n + 63), 64)) thread_binding \"blockIdx.x\" {\n"
            "  for (tx: int32, 0, 64) thread_binding \"threadIdx.x\" {\n"
            "    if (((bx * 64) + tx) < n) {\n"
            "      A[((bx * 64) + tx)] = tx\n"
            "    }\n"
            "  }\n"
            "}\n");
}

// ---- Randomized: the value never changes ---------------------------------------------------------

// A small deterministic generator (splitmix64); the standard distributions differ between libraries.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int64_t Uniform(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  uint64_t s_;
};

int64_t FloorDivRef(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t FloorModRef(int64_t a, int64_t b) { return a - FloorDivRef(a, b) * b; }

// Evaluates integer and bool expressions (bools as 0/1).
int64_t Eval(const Expr& e, const std::unordered_map<const VarNode*, int64_t>& env) {
  switch (e->kind) {
    case ExprKind::kIntImm: return As<IntImmNode>(e)->value;
    case ExprKind::kVar: return env.at(As<VarNode>(e));
    case ExprKind::kNot: return !Eval(As<NotNode>(e)->a, env);
    case ExprKind::kSelect: {
      const auto* s = As<SelectNode>(e);
      return Eval(s->cond, env) ? Eval(s->true_value, env) : Eval(s->false_value, env);
    }
    case ExprKind::kCast: return Eval(As<CastNode>(e)->value, env);
    case ExprKind::kBinary: {
      const auto* b = As<BinaryNode>(e);
      int64_t x = Eval(b->a, env), y = Eval(b->b, env);
      switch (b->op) {
        case BinaryOp::kAdd: return x + y;
        case BinaryOp::kSub: return x - y;
        case BinaryOp::kMul: return x * y;
        case BinaryOp::kFloorDiv: EXPECT_NE(y, 0); return y ? FloorDivRef(x, y) : 0;
        case BinaryOp::kFloorMod: EXPECT_NE(y, 0); return y ? FloorModRef(x, y) : 0;
        case BinaryOp::kMin: return std::min(x, y);
        case BinaryOp::kMax: return std::max(x, y);
        case BinaryOp::kEQ: return x == y;
        case BinaryOp::kNE: return x != y;
        case BinaryOp::kLT: return x < y;
        case BinaryOp::kLE: return x <= y;
        case BinaryOp::kGT: return x > y;
        case BinaryOp::kGE: return x >= y;
        case BinaryOp::kAnd: return x && y;
        case BinaryOp::kOr: return x || y;
        default: break;
      }
      break;
    }
    default: break;
  }
  ADD_FAILURE() << "cannot evaluate " << ToString(e);
  return 0;
}

struct BoundedVar {
  Var var;
  int64_t lo, hi;
};

class ExprGen {
 public:
  ExprGen(Rng* rng, const std::vector<BoundedVar>* vars) : rng_(rng), vars_(vars) {}

  Expr Int(int depth) {
    int64_t pick = rng_->Uniform(0, depth <= 0 ? 1 : 12);
    switch (pick) {
      case 0: return IntImm(rng_->Uniform(-10, 10));
      case 1: return (*vars_)[rng_->Uniform(0, static_cast<int64_t>(vars_->size()) - 1)].var;
      case 2:
      case 3: return Int(depth - 1) + Int(depth - 1);
      case 4: return Int(depth - 1) - Int(depth - 1);
      case 5: return Int(depth - 1) * IntImm(rng_->Uniform(-4, 8));
      case 6:  // full products only near the leaves, so that values stay far from overflow
        return depth <= 2 && rng_->Uniform(0, 2) == 0 ? Int(depth - 1) * Int(depth - 1) : Int(depth - 1) * Int(0);
      case 7: return FloorDiv(Int(depth - 1), Divisor());
      case 8: return FloorMod(Int(depth - 1), Divisor());
      case 9: return Min(Int(depth - 1), Int(depth - 1));
      case 10: return Max(Int(depth - 1), Int(depth - 1));
      case 11: return Select(Bool(depth - 1), Int(depth - 1), Int(depth - 1));
      default: {  // the shapes that splitting and fusing loops produce
        Expr a = Int(depth - 1);
        Expr c = IntImm(rng_->Uniform(1, 8));
        return FloorDiv(a, c) * c + FloorMod(a, c);
      }
    }
  }

  Expr Bool(int depth) {
    static const BinaryOp kCmp[] = {BinaryOp::kEQ, BinaryOp::kNE, BinaryOp::kLT,
                                    BinaryOp::kLE, BinaryOp::kGT, BinaryOp::kGE};
    switch (rng_->Uniform(0, depth <= 0 ? 0 : 4)) {
      case 1: return And(Bool(depth - 1), Bool(depth - 1));
      case 2: return Or(Bool(depth - 1), Bool(depth - 1));
      case 3: return Not(Bool(depth - 1));
      default: return MakeBinary(kCmp[rng_->Uniform(0, 5)], Int(depth - 1), Int(depth - 1));
    }
  }

 private:
  Expr Divisor() {
    // Positive constants, and sometimes a variable whose range is positive (the last one).
    if (rng_->Uniform(0, 5) == 0) return vars_->back().var;
    static const int64_t kDiv[] = {1, 2, 3, 4, 8, 16, 6};
    return IntImm(kDiv[rng_->Uniform(0, 6)]);
  }

  Rng* rng_;
  const std::vector<BoundedVar>* vars_;
};

TEST(SimplifyRandom, PreservesValueAndIsIdempotent) {
  std::vector<BoundedVar> vars = {
      {MakeVar("a"), 0, 7}, {MakeVar("b"), -5, 5}, {MakeVar("c"), 0, 31}, {MakeVar("d"), 1, 16}};
  BoundAnalyzer an;
  for (const auto& v : vars) an.Bind(v.var, IntBound{v.lo, v.hi});
  Rng rng(20240611);
  ExprGen gen(&rng, &vars);
  int changed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    bool boolean = iter % 4 == 3;
    Expr e = boolean ? gen.Bool(4) : gen.Int(static_cast<int>(rng.Uniform(1, 5)));
    Expr s = Simplify(e, &an);
    Expr again = Simplify(s, &an);
    ASSERT_TRUE(ExprDeepEqual(s, again)) << "not idempotent:\n  " << ToString(e) << "\n  -> " << ToString(s)
                                         << "\n  -> " << ToString(again);
    changed += !ExprDeepEqual(e, s);
    for (int p = 0; p < 12; ++p) {
      std::unordered_map<const VarNode*, int64_t> env;
      for (const auto& v : vars) env[v.var.get()] = rng.Uniform(v.lo, v.hi);
      int64_t want = Eval(e, env), got = Eval(s, env);
      if (want != got) {
        std::string point;
        for (const auto& v : vars) point += " " + v.var->name + "=" + std::to_string(env[v.var.get()]);
        FAIL() << "value changed at" << point << ":\n  " << ToString(e) << " = " << want << "\n  " << ToString(s)
               << " = " << got;
      }
    }
  }
  EXPECT_GT(changed, 1000);  // the generator exercises the rules
}

// Without ranges, only the rules that hold for every value apply.
TEST(SimplifyRandom, PreservesValueWithoutBounds) {
  std::vector<BoundedVar> vars = {
      {MakeVar("a"), -50, 50}, {MakeVar("b"), -1000, 1000}, {MakeVar("c"), 0, 3}, {MakeVar("d"), 1, 3}};
  Rng rng(7);
  ExprGen gen(&rng, &vars);
  for (int iter = 0; iter < 2000; ++iter) {
    Expr e = iter % 3 == 2 ? gen.Bool(3) : gen.Int(4);
    Expr s = Simplify(e);
    ASSERT_TRUE(ExprDeepEqual(s, Simplify(s))) << ToString(e) << " -> " << ToString(s);
    for (int p = 0; p < 12; ++p) {
      std::unordered_map<const VarNode*, int64_t> env;
      for (const auto& v : vars) env[v.var.get()] = rng.Uniform(v.lo, v.hi);
      ASSERT_EQ(Eval(e, env), Eval(s, env)) << ToString(e) << "\n  -> " << ToString(s);
    }
  }
}

// Runs statements, recording every store as (buffer, flat index) -> value.
struct Interpreter {
  std::unordered_map<const VarNode*, int64_t> env;
  std::map<std::pair<const BufferNode*, int64_t>, int64_t> memory;

  void Run(const Stmt& s) {
    if (const auto* f = As<ForNode>(s)) {
      int64_t lo = Eval(f->min, env), n = Eval(f->extent, env);
      for (int64_t v = lo; v < lo + n; ++v) {
        env[f->var.get()] = v;
        Run(f->body);
      }
      env.erase(f->var.get());
    } else if (const auto* st = As<BufferStoreNode>(s)) {
      int64_t flat = 0;
      for (const auto& i : st->indices) flat = flat * 1000 + Eval(i, env);
      memory[{st->buffer.get(), flat}] = Eval(st->value, env);
    } else if (const auto* i = As<IfThenElseNode>(s)) {
      if (Eval(i->cond, env)) {
        Run(i->then_case);
      } else if (i->else_case) {
        Run(i->else_case);
      }
    } else if (const auto* q = As<SeqNode>(s)) {
      for (const auto& x : q->stmts) Run(x);
    } else if (const auto* a = As<AllocateNode>(s)) {
      Run(a->body);
    }
  }
};

// Random loop nests (empty, single-iteration and ordinary loops) with guards and stores: loop
// ranges, condition refinement and loop removal must not change what is stored.
TEST(SimplifyRandom, StatementsPreserveStores) {
  Rng rng(99);
  Buffer out = MakeBuffer("O", DType::kInt32, {IntImm(1000)});
  for (int iter = 0; iter < 2000; ++iter) {
    Var p = MakeVar("p"), q = MakeVar("q");
    std::vector<BoundedVar> vars = {{p, 0, 3}, {q, 1, 4}};  // free; the last one serves as a divisor
    std::function<Stmt(int)> gen = [&](int depth) -> Stmt {
      ExprGen g(&rng, &vars);
      switch (rng.Uniform(0, depth <= 0 ? 0 : 4)) {
        case 0: return Store(out, g.Int(3), {FloorMod(g.Int(2), IntImm(997)) + 1});
        case 1: {
          Var v = MakeVar("v" + std::to_string(depth));
          int64_t lo = rng.Uniform(-3, 3), ext = rng.Uniform(-1, 4);
          vars.insert(vars.begin(), {v, lo, std::max(lo, lo + ext - 1)});
          Stmt body = gen(depth - 1);
          vars.erase(vars.begin());
          return For(v, IntImm(lo), IntImm(ext), ForKind::kSerial, body);
        }
        case 2: return IfThenElse(g.Bool(2), gen(depth - 1), rng.Uniform(0, 1) ? gen(depth - 1) : nullptr);
        default: return Seq({gen(depth - 1), gen(depth - 1)});
      }
    };
    Stmt s = gen(4);
    Stmt r = Simplify(s);
    ASSERT_TRUE(StructuralEqual(r, Simplify(r))) << ToString(s) << "->\n" << ToString(r);
    for (int64_t pv = 0; pv <= 3; ++pv) {
      Interpreter want, got;
      want.env[p.get()] = got.env[p.get()] = pv;
      want.env[q.get()] = got.env[q.get()] = pv + 1;
      want.Run(s);
      got.Run(r);
      ASSERT_EQ(want.memory, got.memory) << ToString(s) << "->\n" << ToString(r);
    }
  }
}

}  // namespace
}  // namespace autotune::tir
