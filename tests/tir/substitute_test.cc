#include <gtest/gtest.h>

#include "tir/buffer.h"
#include "tir/printer.h"
#include "tir/stmt.h"
#include "tir/transform/substitute.h"

namespace autotune::tir {
namespace {

TEST(Substitute, Expressions) {
  Var i = MakeVar("i"), j = MakeVar("j");
  Expr e = i * 4 + j;
  Expr r = Substitute(e, {{i.get(), j + 1}});
  EXPECT_EQ(ToString(r), "(((j + 1) * 4) + j)");
  // The function form; nullptr keeps a variable.
  Expr r2 = Substitute(e, [&](const VarNode* v) -> Expr { return v == j.get() ? IntImm(7) : nullptr; });
  EXPECT_EQ(ToString(r2), "((i * 4) + 7)");
  // Nothing to replace: the very same node comes back.
  EXPECT_EQ(Substitute(e, {{MakeVar("k").get(), IntImm(0)}}), e);
  EXPECT_EQ(Substitute(e, std::unordered_map<const VarNode*, Expr>{}), e);
}

TEST(Substitute, SharesUnchangedSubtrees) {
  Var i = MakeVar("i"), j = MakeVar("j");
  Expr left = i * 4 + 3;
  Expr e = Add(left, j);
  Expr r = Substitute(e, {{j.get(), IntImm(1)}});
  ASSERT_NE(r, e);
  EXPECT_EQ(As<BinaryNode>(r)->a, left);
}

TEST(Substitute, Statements) {
  Var i = MakeVar("i"), n = MakeVar("n"), k = MakeVar("k");
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(64)});
  Stmt s = For(i, IntImm(0), n, ForKind::kSerial,
               IfThenElse(LT(i + k, n), Store(a, Cast(DType::kFloat32, k), {i + k})));
  Stmt r = Substitute(s, {{n.get(), IntImm(16)}, {k.get(), IntImm(2)}});
  EXPECT_EQ(ToString(r),
            "for (i: int32, 0, 16) serial {\n"
            "  if ((i + 2) < 16) {\n"
            "    A[(i + 2)] = cast<float32>(2)\n"
            "  }\n"
            "}\n");
  // The loop's own variable is a binding occurrence: its uses are replaced, the binding is not.
  Var i2 = MakeVar("i2");
  Stmt r2 = Substitute(s, {{i.get(), Expr(i2)}});
  EXPECT_EQ(As<ForNode>(r2)->var, i);
  EXPECT_EQ(ToString(r2),
            "for (i: int32, 0, n) serial {\n"
            "  if ((i2 + k) < n) {\n"
            "    A[(i2 + k)] = cast<float32>(k)\n"
            "  }\n"
            "}\n");
}

}  // namespace
}  // namespace autotune::tir
