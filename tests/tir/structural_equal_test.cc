#include <gtest/gtest.h>

#include <cmath>

#include "tir/buffer.h"
#include "tir/stmt.h"
#include "tir/structural_equal.h"

namespace autotune::tir {
namespace {

void ExpectEqual(const Expr& a, const Expr& b) {
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_TRUE(StructuralEqual(b, a));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
}
void ExpectEqual(const Stmt& a, const Stmt& b) {
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_TRUE(StructuralEqual(b, a));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
}
void ExpectUnequal(const Expr& a, const Expr& b) {
  EXPECT_FALSE(StructuralEqual(a, b));
  EXPECT_FALSE(StructuralEqual(b, a));
}
void ExpectUnequal(const Stmt& a, const Stmt& b) {
  EXPECT_FALSE(StructuralEqual(a, b));
  EXPECT_FALSE(StructuralEqual(b, a));
}

TEST(StructuralEqual, ModuloRenaming) {
  Var i = MakeVar("i"), j = MakeVar("j"), x = MakeVar("x"), y = MakeVar("y");
  ExpectEqual(i + j * 4, x + y * 4);
  ExpectEqual(i + i, x + x);
  ExpectEqual(i + j, j + i);  // i<->j, j<->i is a bijection
  // The mapping is a bijection: one var cannot stand for two, nor two for one.
  ExpectUnequal(i + i, x + y);
  ExpectUnequal(i + j, x + x);
  ExpectUnequal((i + j) + i, (x + y) + y);
}

TEST(StructuralEqual, SensitiveToStructure) {
  Var i = MakeVar("i"), j = MakeVar("j");
  ExpectUnequal(i + j, i - j);
  ExpectUnequal(i + j, Sub(i, j));
  ExpectUnequal(FloorDiv(i, IntImm(4)), FloorMod(i, IntImm(4)));
  ExpectUnequal(IntImm(4), IntImm(5));
  ExpectUnequal(IntImm(4), IntImm(4, DType::kInt64));  // dtype
  ExpectUnequal(Expr(MakeVar("a", DType::kInt32)), Expr(MakeVar("a", DType::kInt64)));
  ExpectUnequal(FloatImm(0.0), FloatImm(-0.0));  // bitwise
  ExpectEqual(FloatImm(std::nan("")), FloatImm(std::nan("")));
  ExpectUnequal(Call(DType::kFloat32, "exp", {FloatImm(1.0)}), Call(DType::kFloat32, "log", {FloatImm(1.0)}));
  ExpectUnequal(Call(DType::kFloat32, "f", {FloatImm(1.0)}), Call(DType::kFloat32, "f", {FloatImm(1.0), FloatImm(1.0)}));
  Var k = MakeVar("k");
  ExpectUnequal(Reduce(ReduceOp::kSum, Cast(DType::kFloat32, k), {k}, {IntImm(8)}),
                Reduce(ReduceOp::kMax, Cast(DType::kFloat32, k), {k}, {IntImm(8)}));
  Var k2 = MakeVar("k2");
  ExpectEqual(Reduce(ReduceOp::kSum, Cast(DType::kFloat32, k), {k}, {IntImm(8)}),
              Reduce(ReduceOp::kSum, Cast(DType::kFloat32, k2), {k2}, {IntImm(8)}));
}

TEST(StructuralEqual, Buffers) {
  Var i = MakeVar("i"), j = MakeVar("j");
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(16)});
  Buffer a2 = MakeBuffer("A", DType::kFloat32, {IntImm(16)});
  Buffer b = MakeBuffer("B", DType::kFloat32, {IntImm(16)});
  EXPECT_TRUE(StructuralEqual(a, a2));
  EXPECT_FALSE(StructuralEqual(a, b));  // names matter for buffers
  EXPECT_FALSE(StructuralEqual(a, MakeBuffer("A", DType::kFloat64, {IntImm(16)})));
  EXPECT_FALSE(StructuralEqual(a, MakeBuffer("A", DType::kFloat32, {IntImm(17)})));
  EXPECT_FALSE(StructuralEqual(a, MakeBuffer("A", DType::kFloat32, {IntImm(16)}, Scope::kShared)));
  EXPECT_FALSE(StructuralEqual(a, MakeBuffer("A", DType::kFloat32, {IntImm(16)}, Scope::kGlobal, {IntImm(1)})));
  EXPECT_EQ(StructuralHash(a), StructuralHash(a2));
  ExpectEqual(Load(a, {i}), Load(a2, {j}));
  // Bijection over buffers: A, A versus A, A' (two distinct buffers of the same definition).
  ExpectEqual(Load(a, {i}) + Load(a, {i}), Load(a2, {j}) + Load(a2, {j}));
  ExpectUnequal(Load(a, {i}) + Load(a, {i}), Load(a, {j}) + Load(a2, {j}));
  // Symbolic shapes take part in the variable mapping.
  Var n = MakeVar("n"), m = MakeVar("m");
  Buffer sn = MakeBuffer("S", DType::kFloat32, {n});
  Buffer sm = MakeBuffer("S", DType::kFloat32, {m});
  ExpectEqual(Load(sn, {n - 1}), Load(sm, {m - 1}));
  ExpectUnequal(Load(sn, {n - 1}), Load(sm, {i - 1}));
}

Stmt MakeLoopNest(const char* tag_name, int64_t unroll) {
  Var i = MakeVar("i"), j = MakeVar("j");
  Buffer c = MakeBuffer("C", DType::kFloat32, {IntImm(8), IntImm(8)});
  Buffer s = MakeBuffer("C_local", DType::kFloat32, {IntImm(1)}, Scope::kLocal);
  Stmt body = Allocate(s, Seq({Store(s, FloatImm(0.0), {IntImm(0)}),
                               IfThenElse(LT(j, IntImm(4)), Store(c, Load(s, {IntImm(0)}), {i, j})), Barrier()}));
  ThreadTag tag = *ParseThreadTag(tag_name);
  return For(i, IntImm(0), IntImm(8), ForKind::kThreadBinding,
             For(j, IntImm(0), IntImm(8), ForKind::kSerial, body, ThreadTag::kNone, unroll), tag);
}

TEST(StructuralEqual, Statements) {
  ExpectEqual(MakeLoopNest("threadIdx.x", 0), MakeLoopNest("threadIdx.x", 0));
  ExpectUnequal(MakeLoopNest("threadIdx.x", 0), MakeLoopNest("threadIdx.y", 0));
  ExpectUnequal(MakeLoopNest("threadIdx.x", 0), MakeLoopNest("threadIdx.x", 16));
  EXPECT_NE(StructuralHash(MakeLoopNest("threadIdx.x", 0)), StructuralHash(MakeLoopNest("threadIdx.y", 0)));

  Var i = MakeVar("i");
  Buffer c = MakeBuffer("C", DType::kInt32, {IntImm(8)});
  Stmt st = Store(c, i, {i});
  ExpectUnequal(IfThenElse(Bool(true), st), IfThenElse(Bool(true), st, st));  // null else
  ExpectUnequal(For(i, IntImm(0), IntImm(8), ForKind::kSerial, st),
                For(i, IntImm(0), IntImm(8), ForKind::kParallel, st));
  ExpectUnequal(Seq({st, Barrier()}), Seq({Barrier(), st}));
  // The same loop node twice in a sequence: its var pairs with itself both times.
  Stmt loop = For(i, IntImm(0), IntImm(8), ForKind::kSerial, st);
  Var i2 = MakeVar("i");
  Stmt loop2 = For(i2, IntImm(0), IntImm(8), ForKind::kSerial, Store(c, i2, {i2}));
  ExpectEqual(Seq({loop, loop}), Seq({loop2, loop2}));
  // Two loops over one var on one side, two distinct vars on the other: not a bijection.
  Var i3 = MakeVar("i");
  Stmt loop3 = For(i3, IntImm(0), IntImm(8), ForKind::kSerial, Store(c, i3, {i3}));
  ExpectUnequal(Seq({loop, loop}), Seq({loop2, loop3}));
}

TEST(StructuralEqual, HashDependsOnOrderNotIdentity) {
  Var i = MakeVar("i"), j = MakeVar("j");
  EXPECT_EQ(StructuralHash(i + j), StructuralHash(j + i));
  EXPECT_NE(StructuralHash(i + i), StructuralHash(i + j));
  EXPECT_NE(StructuralHash(i + j), StructuralHash(i - j));
  EXPECT_NE(StructuralHash(IntImm(1)), StructuralHash(IntImm(2)));
  EXPECT_EQ(StructuralHash(IntImm(7)), StructuralHash(IntImm(7)));  // deterministic
}

TEST(ExprDeepEqual, ComparesVariablesByIdentity) {
  Var i = MakeVar("i"), j = MakeVar("i");
  EXPECT_TRUE(ExprDeepEqual(i + 1, i + 1));
  EXPECT_FALSE(ExprDeepEqual(i + 1, j + 1));
  EXPECT_TRUE(StructuralEqual(i + 1, j + 1));
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(4)});
  Buffer a2 = MakeBuffer("A", DType::kFloat32, {IntImm(4)});
  EXPECT_TRUE(ExprDeepEqual(Load(a, {i}), Load(a, {i})));
  EXPECT_FALSE(ExprDeepEqual(Load(a, {i}), Load(a2, {i})));
}

}  // namespace
}  // namespace autotune::tir
