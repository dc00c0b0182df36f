// The generic mutator: an unchanged subtree comes back as the very same node (nothing is copied), a
// changed node is rebuilt with its unchanged fields and list elements shared, and fields are mutated
// in their declared order (a loop's own variable, a binding, is not mutated).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tir/buffer.h"
#include "tir/functor.h"
#include "tir/printer.h"
#include "tir/stmt.h"

namespace autotune::tir {
namespace {

// Replaces one variable by another expression; records the variables it meets, in order.
class Replace : public IRMutator {
 public:
  Replace(const VarNode* from, Expr to) : from_(from), to_(std::move(to)) {}
  Expr Mutate_(const VarNode* op, const Expr& self) override {
    met.push_back(op->name);
    return op == from_ ? to_ : self;
  }
  std::vector<std::string> met;

 private:
  const VarNode* from_;
  Expr to_;
};

TEST(IRMutator, UnchangedTreeIsReturnedAsIs) {
  Var i = MakeVar("i"), j = MakeVar("j"), n = MakeVar("n");
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(8), IntImm(8)});
  Stmt s = For(i, IntImm(0), IntImm(8), ForKind::kSerial,
               Seq({Store(a, Load(a, {i, j}) + Load(a, {j, i}), {i, j}),
                    IfThenElse(LT(i, j), Store(a, FloatImm(0), {i, i}))}));
  Replace r(n.get(), IntImm(0));
  EXPECT_EQ(r.Mutate(s), s);
}

TEST(IRMutator, ChangedNodeSharesWhatDidNotChange) {
  Var i = MakeVar("i"), j = MakeVar("j");
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(8), IntImm(8), IntImm(8)});
  Expr first = i * 2, third = i + 1;
  Expr load = Load(a, {first, Expr(j), third});
  Stmt untouched = Store(a, FloatImm(1), {first, first, first});
  Stmt s = Seq({Store(a, load, {first, first, first}), untouched});
  Replace r(j.get(), IntImm(3));
  Stmt out = r.Mutate(s);
  ASSERT_NE(out, s);
  EXPECT_EQ(ToString(out),
            "A[(i * 2), (i * 2), (i * 2)] = A[(i * 2), 3, (i + 1)]\n"
            "A[(i * 2), (i * 2), (i * 2)] = 1f\n");
  // The input is intact.
  EXPECT_EQ(ToString(load), "A[(i * 2), j, (i + 1)]");
  const auto* seq = As<SeqNode>(out);
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->stmts[1], untouched);
  const auto* store = As<BufferStoreNode>(seq->stmts[0]);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->indices, As<BufferStoreNode>(As<SeqNode>(s)->stmts[0])->indices);
  const auto* new_load = As<BufferLoadNode>(store->value);
  ASSERT_NE(new_load, nullptr);
  EXPECT_EQ(new_load->buffer, a);
  EXPECT_EQ(new_load->indices[0], first);
  EXPECT_EQ(new_load->indices[2], third);
}

// A rule may say "unchanged" with a null result (what the default rules do, sparing a copy of the
// node's pointer) or by returning `self`; either way Mutate hands back the node itself, and a change
// below still rebuilds the path to it.
class NullWhenUnchanged : public Replace {
 public:
  using Replace::Replace;
  using Replace::Mutate_;  // the variable rule stays Replace's
  Expr Mutate_(const BinaryNode* op, const Expr&) override { return ChangedFields(op); }
  Stmt Mutate_(const BufferStoreNode* op, const Stmt& self) override { return MutateFields(op, self); }
};

TEST(IRMutator, ANullResultMeansUnchanged) {
  Var i = MakeVar("i"), j = MakeVar("j"), n = MakeVar("n");
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(8), IntImm(8)});
  Expr sum = Load(a, {i, j}) + Load(a, {j, i});
  Stmt s = Store(a, sum, {i, j});
  NullWhenUnchanged keep(n.get(), IntImm(0));
  EXPECT_EQ(keep.Mutate(sum), sum);
  EXPECT_EQ(keep.Mutate(s), s);
  NullWhenUnchanged change(j.get(), IntImm(3));
  EXPECT_EQ(ToString(change.Mutate(s)), "A[i, 3] = (A[i, 3] + A[3, i])\n");
  EXPECT_EQ(ToString(s), "A[i, j] = (A[i, j] + A[j, i])\n");
}

TEST(IRMutator, FieldsAreMutatedInDeclaredOrder) {
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k"), n = MakeVar("n");
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(8), IntImm(8)});
  Stmt s = For(i, j, n, ForKind::kSerial, Store(a, Load(a, {k, i}), {j, k}));
  Replace r(k.get(), IntImm(0));
  r.Mutate(s);
  // min, extent, then the body: the store's value, then its indices.
  EXPECT_EQ(r.met, (std::vector<std::string>{"j", "n", "k", "i", "j", "k"}));
}

}  // namespace
}  // namespace autotune::tir
