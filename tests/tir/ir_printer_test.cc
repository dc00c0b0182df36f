#include <gtest/gtest.h>

#include <limits>

#include "tir/buffer.h"
#include "tir/printer.h"
#include "tir/stmt.h"

namespace autotune::tir {
namespace {

TEST(IrPrinter, Constants) {
  EXPECT_EQ(ToString(IntImm(128)), "128");
  EXPECT_EQ(ToString(IntImm(-5)), "-5");
  EXPECT_EQ(ToString(IntImm(128, DType::kInt64)), "128i64");
  EXPECT_EQ(ToString(Bool(true)), "true");
  EXPECT_EQ(ToString(Bool(false)), "false");
  EXPECT_EQ(ToString(FloatImm(1.0)), "1f");
  EXPECT_EQ(ToString(FloatImm(0.5)), "0.5f");
  EXPECT_EQ(ToString(FloatImm(static_cast<double>(0.1f))), "0.1f");
  // A float32 immediate holding a double that no float equals stays distinguishable.
  EXPECT_EQ(ToString(FloatImm(0.1)), "float32(0.1)");
  EXPECT_EQ(ToString(FloatImm(0.5, DType::kFloat64)), "0.5f64");
  EXPECT_EQ(ToString(FloatImm(0.1, DType::kFloat64)), "0.1f64");
  EXPECT_EQ(ToString(FloatImm(1e20, DType::kFloat64)), "1e+20f64");
  EXPECT_EQ(ToString(FloatImm(-std::numeric_limits<double>::infinity())), "float32(-inf)");
  EXPECT_EQ(ToString(FloatImm(std::numeric_limits<double>::quiet_NaN(), DType::kFloat64)), "float64(nan)");
}

TEST(IrPrinter, Expressions) {
  Var i = MakeVar("i"), j = MakeVar("j");
  Var x = MakeVar("x", DType::kFloat32);
  Var c = MakeVar("c", DType::kBool);
  EXPECT_EQ(ToString(i + j * 4), "(i + (j * 4))");
  EXPECT_EQ(ToString(Sub(i, j)), "(i - j)");
  EXPECT_EQ(ToString(FloorDiv(i, IntImm(4))), "floordiv(i, 4)");
  EXPECT_EQ(ToString(FloorMod(i, IntImm(4))), "floormod(i, 4)");
  EXPECT_EQ(ToString(Min(i, j)), "min(i, j)");
  EXPECT_EQ(ToString(Max(i, j)), "max(i, j)");
  EXPECT_EQ(ToString(And(LT(i, j), Not(c))), "((i < j) && !c)");
  EXPECT_EQ(ToString(Or(EQ(i, j), NE(i, j))), "((i == j) || (i != j))");
  EXPECT_EQ(ToString(Not(GE(i, j))), "!(i >= j)");
  EXPECT_EQ(ToString(Select(c, i, j)), "select(c, i, j)");
  EXPECT_EQ(ToString(Cast(DType::kFloat64, x)), "cast<float64>(x)");
  EXPECT_EQ(ToString(Div(x, FloatImm(2.0))), "(x / 2f)");
  EXPECT_EQ(ToString(Call(DType::kFloat32, "exp", {x})), "exp(x)");
  EXPECT_EQ(ToString(Call(DType::kFloat32, "pow", {x, FloatImm(2.0)})), "pow(x, 2f)");
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(16), IntImm(8)});
  EXPECT_EQ(ToString(Load(a, {i, j + 1})), "A[i, (j + 1)]");
  Var k = MakeVar("k"), l = MakeVar("l");
  EXPECT_EQ(ToString(Reduce(ReduceOp::kSum, Load(a, {k, l}), {k, l}, {IntImm(16), IntImm(8)})),
            "sum(A[k, l], axis=[k: 0..16, l: 0..8])");
  EXPECT_EQ(ToString(Reduce(ReduceOp::kMax, x, {k}, {IntImm(4)})), "max(x, axis=[k: 0..4])");
}

TEST(IrPrinter, Matmul) {
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k");
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(128), IntImm(64)});
  Buffer b = MakeBuffer("B", DType::kFloat32, {IntImm(64), IntImm(128)});
  Buffer c = MakeBuffer("C", DType::kFloat32, {IntImm(128), IntImm(128)});
  Stmt update = Store(c, Load(c, {i, j}) + Load(a, {i, k}) * Load(b, {k, j}), {i, j});
  Stmt s = For(i, IntImm(0), IntImm(128), ForKind::kSerial,
               For(j, IntImm(0), IntImm(128), ForKind::kParallel,
                   Seq({Store(c, FloatImm(0.0), {i, j}),
                        For(k, IntImm(0), IntImm(64), ForKind::kUnrolled, update, ThreadTag::kNone, 64)})));
  EXPECT_EQ(ToString(s),
            "for (i: int32, 0, 128) serial {\n"
            "  for (j: int32, 0, 128) parallel {\n"
            "    C[i, j] = 0f\n"
            "    for (k: int32, 0, 64) unrolled auto_unroll_max_step=64 {\n"
            "      C[i, j] = (C[i, j] + (A[i, k] * B[k, j]))\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(IrPrinter, GpuStatements) {
  Var bx = MakeVar("bx"), tx = MakeVar("tx"), v = MakeVar("v", DType::kInt64);
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(1024)});
  Buffer sh = MakeBuffer("A_shared", DType::kFloat32, {IntImm(64), IntImm(8)}, Scope::kShared, {IntImm(9), IntImm(1)});
  Buffer loc = MakeBuffer("acc", DType::kFloat32, {IntImm(4)}, Scope::kLocal);
  Stmt body = Seq({
      Store(sh, Load(a, {bx * 64 + tx}), {tx, IntImm(0)}),
      Barrier(),
      IfThenElse(LT(tx, IntImm(32)), Store(loc, Load(sh, {tx, IntImm(1)}), {IntImm(0)}),
                 Store(loc, FloatImm(1.5), {IntImm(0)})),
      IfThenElse(MakeVar("flag", DType::kBool), Barrier()),
      For(v, IntImm(0, DType::kInt64), IntImm(4, DType::kInt64), ForKind::kVectorized,
          Store(a, FloatImm(2.0), {Cast(DType::kInt32, v)})),
  });
  Stmt s = For(bx, IntImm(0), IntImm(16), ForKind::kThreadBinding,
               For(tx, IntImm(0), IntImm(64), ForKind::kThreadBinding,
                   Allocate(sh, Allocate(loc, body)), ThreadTag::kThreadIdxX),
               ThreadTag::kBlockIdxX);
  EXPECT_EQ(ToString(s),
            "for (bx: int32, 0, 16) thread_binding \"blockIdx.x\" {\n"
            "  for (tx: int32, 0, 64) thread_binding \"threadIdx.x\" {\n"
            "    allocate A_shared: float32[64, 8] shared strides=[9, 1] {\n"
            "      allocate acc: float32[4] local {\n"
            "        A_shared[tx, 0] = A[((bx * 64) + tx)]\n"
            "        barrier()\n"
            "        if (tx < 32) {\n"
            "          acc[0] = A_shared[tx, 1]\n"
            "        } else {\n"
            "          acc[0] = 1.5f\n"
            "        }\n"
            "        if (flag) {\n"
            "          barrier()\n"
            "        }\n"
            "        for (v: int64, 0i64, 4i64) vectorized {\n"
            "          A[cast<int32>(v)] = 2f\n"
            "        }\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(IrPrinter, DisambiguatesSharedNames) {
  Var i1 = MakeVar("i"), i2 = MakeVar("i"), i3 = MakeVar("i");
  Var taken = MakeVar("i_1");  // a real variable already named like the first suffix
  EXPECT_EQ(ToString(i1 + i2), "(i + i_1)");
  EXPECT_EQ(ToString((i1 + i2) + (i3 + i1)), "((i + i_1) + (i_2 + i))");
  EXPECT_EQ(ToString((i1 + i2) + taken), "((i + i_2) + i_1)");
  // Buffers too.
  Buffer a1 = MakeBuffer("A", DType::kFloat32, {IntImm(4)});
  Buffer a2 = MakeBuffer("A", DType::kFloat32, {IntImm(4)});
  EXPECT_EQ(ToString(Store(a1, Load(a2, {i1}), {i1})), "A[i] = A_1[i]\n");
  // Names restart for every printed tree, so the text does not depend on what was printed before.
  EXPECT_EQ(ToString(Expr(i2)), "i");
  // Loops over distinct variables with one name.
  Buffer b = MakeBuffer("B", DType::kInt32, {IntImm(4)});
  Stmt s = Seq({For(i1, IntImm(0), IntImm(4), ForKind::kSerial, Store(b, i1, {i1})),
                For(i2, IntImm(0), IntImm(4), ForKind::kSerial, Store(b, i2, {i2}))});
  EXPECT_EQ(ToString(s),
            "for (i: int32, 0, 4) serial {\n"
            "  B[i] = i\n"
            "}\n"
            "for (i_1: int32, 0, 4) serial {\n"
            "  B[i_1] = i_1\n"
            "}\n");
}

TEST(IrPrinter, EmptySeqAndNull) {
  EXPECT_EQ(ToString(Seq({})), "");
  EXPECT_EQ(ToString(Expr()), "<null>");
}

}  // namespace
}  // namespace autotune::tir
