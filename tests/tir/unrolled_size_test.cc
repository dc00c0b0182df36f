#include <gtest/gtest.h>

#include "tir/analysis/unrolled_size.h"
#include "tir/buffer.h"
#include "tir/codegen/cuda_kernels.h"
#include "tir/stmt.h"

namespace autotune::tir {
namespace {

class UnrolledSize : public ::testing::Test {
 protected:
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(4096)});
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k");
  Stmt StoreAt(const Expr& index) { return Store(a, FloatImm(1.0), {index}); }
  Stmt Loop(const Var& v, int64_t extent, ForKind kind, Stmt body) {
    return For(v, IntImm(0), IntImm(extent), kind, std::move(body));
  }
};

TEST_F(UnrolledSize, UnrolledLoopsMultiplyTheirBody) {
  // 8 x (store + 4 x store + barrier) = 48.
  Stmt s = Loop(i, 8, ForKind::kUnrolled,
                Seq({StoreAt(i), Loop(j, 4, ForKind::kUnrolled, StoreAt(i * 4 + j)), Barrier()}));
  EXPECT_EQ(UnrolledStatementCount(s), 48);
}

TEST_F(UnrolledSize, RolledLoopsCountTheirBodyOnce) {
  // A serial loop of 1000 around an unrolled loop of 16: the code holds 16 stores, not 16000.
  Stmt s = Loop(i, 1000, ForKind::kSerial, Loop(j, 16, ForKind::kUnrolled, StoreAt(j)));
  EXPECT_EQ(UnrolledStatementCount(s), 16);
  // Vectorized and thread-bound loops are not copies of their body either.
  EXPECT_EQ(UnrolledStatementCount(Loop(k, 4, ForKind::kVectorized, StoreAt(k))), 1);
  // A symbolic extent cannot be unrolled.
  EXPECT_EQ(UnrolledStatementCount(For(i, IntImm(0), j, ForKind::kUnrolled, StoreAt(i))), 1);
}

TEST_F(UnrolledSize, ConditionalsCountBothBranches) {
  Stmt s = Loop(i, 4, ForKind::kUnrolled, IfThenElse(LT(i, IntImm(2)), StoreAt(i), StoreAt(i + 1)));
  EXPECT_EQ(UnrolledStatementCount(s), 8);
  EXPECT_EQ(UnrolledStatementCount(Stmt()), 0);
}

TEST_F(UnrolledSize, ABackendRuleDecidesWhichLoopsAreExpanded) {
  // A serial loop over a thread's register array: CUDA codegen unrolls it (so that the array can
  // live in registers), the default rule does not.
  Buffer acc = MakeBuffer("acc", DType::kFloat32, {IntImm(8)}, Scope::kLocal);
  Stmt s = Loop(i, 8, ForKind::kSerial, Store(acc, FloatImm(0.0), {i}));
  EXPECT_EQ(UnrolledStatementCount(s), 1);
  EXPECT_EQ(UnrolledStatementCount(s, CudaFullyUnrolls), 8);
  // A serial loop over global memory stays rolled under both.
  Stmt g = Loop(i, 8, ForKind::kSerial, StoreAt(i));
  EXPECT_EQ(UnrolledStatementCount(g, CudaFullyUnrolls), 1);
  // Nested: 4 (unrolled) x 8 (register array) under the CUDA rule.
  Stmt n = Loop(j, 4, ForKind::kUnrolled, Seq({s, StoreAt(j)}));
  EXPECT_EQ(UnrolledStatementCount(n), 8);
  EXPECT_EQ(UnrolledStatementCount(n, CudaFullyUnrolls), 36);
}

}  // namespace
}  // namespace autotune::tir
