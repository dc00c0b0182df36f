// Matching a tensorized tile against its intrinsic: the verdict lowering asks for and the operands code
// generation uses agree, on linear indices (decided by their coefficients) and on others (simplified).
#include "tir/analysis/tensor_intrinsics.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tir/printer.h"
#include "tir/transform/simplify.h"

namespace autotune::tir {
namespace {

// A load_a_16x16 tile: A_local[i, k] = A_shared[index(i, k, w)], w a variable outside the tile.
struct LoadTile {
  Var i = MakeVar("i"), k = MakeVar("k"), w = MakeVar("w");
  Buffer shared = MakeBuffer("A_shared", DType::kFloat16, {IntImm(64), IntImm(72)}, Scope::kShared);
  Buffer local = MakeBuffer("A_local", DType::kFloat16, {IntImm(16), IntImm(16)}, Scope::kLocal);

  Stmt Tile(const std::function<std::vector<Expr>(const Var&, const Var&, const Var&)>& index) const {
    Stmt store = Store(local, Load(shared, index(i, k, w)), {i, k});
    return Tensorize("load_a_16x16", For(i, IntImm(0), IntImm(16), ForKind::kSerial,
                                         For(k, IntImm(0), IntImm(16), ForKind::kSerial, store)));
  }
};

const TensorizeNode& AsTile(const Stmt& s) { return *As<TensorizeNode>(s); }

TEST(TensorIntrinsicMatch, VerdictAndOperandsAgree) {
  LoadTile t;
  const Expr c16 = IntImm(16);
  // Rows of 72 elements, the warp's rows at w * 16: linear.
  const Stmt linear = t.Tile([&](const Var& i, const Var& k, const Var& w) {
    return std::vector<Expr>{Add(Mul(w, c16), i), Add(k, IntImm(8))};
  });
  ASSERT_TRUE(CheckTensorIntrinsic(AsTile(linear)));
  auto call = MatchTensorIntrinsic(AsTile(linear));
  ASSERT_TRUE(call) << call.error().message;
  EXPECT_EQ(call->a->row_step, 72);
  EXPECT_EQ(ToString(call->a->origin), ToString(Simplify(Add(Mul(t.w, IntImm(1152)), IntImm(8)))));

  // floordiv(k * 2, 2) is k only once simplified: the same verdict, by the other path.
  const Stmt folded = t.Tile([&](const Var& i, const Var& k, const Var&) {
    return std::vector<Expr>{i, FloorDiv(Mul(k, IntImm(2)), IntImm(2))};
  });
  EXPECT_TRUE(CheckTensorIntrinsic(AsTile(folded)));
  EXPECT_TRUE(MatchTensorIntrinsic(AsTile(folded)));

  // Read down a column (k moves a row), or every other element: not a tile, by either path.
  const Stmt by_column = t.Tile([&](const Var& i, const Var& k, const Var&) { return std::vector<Expr>{k, i}; });
  const Stmt strided = t.Tile([&](const Var& i, const Var& k, const Var&) {
    return std::vector<Expr>{i, Mul(k, IntImm(2))};
  });
  const Stmt strided_folded = t.Tile([&](const Var& i, const Var& k, const Var&) {
    return std::vector<Expr>{i, FloorDiv(Mul(k, IntImm(4)), IntImm(2))};
  });
  for (const Stmt& s : {by_column, strided, strided_folded}) {
    auto verdict = CheckTensorIntrinsic(AsTile(s));
    auto match = MatchTensorIntrinsic(AsTile(s));
    ASSERT_FALSE(verdict);
    ASSERT_FALSE(match);
    EXPECT_EQ(verdict.error().message, match.error().message);
    EXPECT_NE(match.error().message.find("A_shared is not"), std::string::npos) << match.error().message;
  }
}

}  // namespace
}  // namespace autotune::tir
