#include <gtest/gtest.h>

#include <unordered_map>

#include "tir/expr.h"
#include "tir/structural_equal.h"
#include "tir/transform/linear_form.h"
#include "tir/transform/substitute.h"

namespace autotune::tir::linear_form_test {
namespace {

TEST(TermHash, EqualForDeepEqualTermsBuiltApart) {
  Var x = MakeVar("x"), y = MakeVar("y");
  const Expr a = FloorMod(FloorDiv(Add(x, Mul(y, IntImm(4))), IntImm(3)), IntImm(16));
  const Expr b = FloorMod(FloorDiv(Add(x, Mul(y, IntImm(4))), IntImm(3)), IntImm(16));
  ASSERT_NE(a.get(), b.get());
  EXPECT_EQ(TermHash(a), TermHash(b));
  EXPECT_EQ(TermHash(a), TermHash(a));  // the second call reads what the first kept on the node
}

// The hash is kept on the node; a mutator copies a node to change a field, and the copy must not
// carry the original's hash.
TEST(TermHash, NodeCopiedWithNewFieldsHashesItsOwnFields) {
  Var x = MakeVar("x"), y = MakeVar("y"), z = MakeVar("z");
  const Expr original = FloorDiv(Add(x, y), IntImm(3));
  const size_t before = TermHash(original);
  std::unordered_map<const VarNode*, Expr> values{{x.get(), z}};
  const Expr renamed = Substitute(original, values);
  ASSERT_TRUE(ExprDeepEqual(renamed, FloorDiv(Add(z, y), IntImm(3))));
  EXPECT_EQ(TermHash(renamed), TermHash(FloorDiv(Add(z, y), IntImm(3))));
  EXPECT_NE(TermHash(renamed), before);
  EXPECT_EQ(TermHash(original), before);
}

TEST(LinearSum, MergesLikeTermsInOrderOfFirstAppearance) {
  Var x = MakeVar("x"), y = MakeVar("y");
  const Expr q = FloorDiv(x, IntImm(3));
  // q*2 + y + floordiv(x, 3) - 5: the two quotients are one term (another node, same expression).
  const LinearSum sum = ToLinear(Sub(Add(Add(Mul(q, IntImm(2)), y), FloorDiv(x, IntImm(3))), IntImm(5)));
  ASSERT_TRUE(sum.ok);
  ASSERT_EQ(sum.terms.size(), 2u);
  EXPECT_TRUE(ExprDeepEqual(sum.terms[0].expr, q));
  EXPECT_EQ(sum.terms[0].coeff, 3);
  EXPECT_EQ(sum.terms[1].expr.get(), y.get());
  EXPECT_EQ(sum.terms[1].coeff, 1);
  EXPECT_EQ(sum.constant, -5);
}

TEST(LinearSum, CancelledTermIsDropped) {
  Var x = MakeVar("x"), y = MakeVar("y");
  const LinearSum sum = ToLinear(Sub(Add(FloorMod(x, IntImm(7)), y), FloorMod(x, IntImm(7))));
  ASSERT_EQ(sum.terms.size(), 1u);
  EXPECT_EQ(sum.terms[0].expr.get(), y.get());
}

}  // namespace
}  // namespace autotune::tir::linear_form_test
