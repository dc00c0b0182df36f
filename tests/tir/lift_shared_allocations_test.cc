// LiftSharedAllocations (tir/lower/lift_shared_allocations.h): a kernel's shared allocations move to
// block level, just inside the innermost blockIdx loop around them.
#include "tir/lower/lift_shared_allocations.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "tests/tir/golden.h"
#include "tests/tir/lowering_test_util.h"
#include "tir/functor.h"
#include "tir/lower/inject_virtual_thread.h"
#include "tir/printer.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

// Every shared Allocate is the direct body of a blockIdx loop or of another shared Allocate that is.
struct SharedPlacement : IRVisitor {
  int misplaced = 0, shared = 0;
  void Visit_(const ForNode* op) override {
    if (IsBlockTag(op->tag)) {
      Stmt s = op->body;
      while (const auto* a = As<AllocateNode>(s)) {
        if (a->buffer->scope != Scope::kShared) break;
        placed.insert(a);
        s = a->body;
      }
    }
    VisitFields(op);
  }
  void Visit_(const AllocateNode* op) override {
    if (op->buffer->scope == Scope::kShared) {
      ++shared;
      misplaced += placed.count(op) == 0;
    }
    VisitFields(op);
  }
  std::unordered_set<const AllocateNode*> placed;
};

TEST(LiftSharedAllocations, GemmKernel) {
  Gemm g(/*shared=*/true);
  Stmt out = LiftSharedAllocations(InjectVirtualThread(g.body));
  SharedPlacement check;
  check.Visit(out);
  EXPECT_EQ(check.shared, 2);
  EXPECT_EQ(check.misplaced, 0);
  ExpectGolden(ToString(out), "lift_shared_allocations_gemm.tir");
  EXPECT_EQ(LiftSharedAllocations(out), out);
}

TEST(LiftSharedAllocations, KernelWithoutBlockLoopsAndNestedBlockLoops) {
  Var tx = MakeVar("tx"), k = MakeVar("k"), by = MakeVar("by"), bx = MakeVar("bx"), i = MakeVar("i");
  Buffer s1 = Buf("S1", {4}, Scope::kShared), s2 = Buf("S2", {4}, Scope::kShared);
  Buffer s3 = Buf("S3", {4}, Scope::kShared), s4 = Buf("S4", {4}, Scope::kShared);
  Buffer l = Buf("L", {1}, Scope::kLocal), c = Buf("C", {64});
  auto use = [&](const Buffer& b, Expr at) { return Store(b, Load(c, {at}), {tx}); };
  // A kernel of threads only: S1 goes around the threadIdx loop.
  Stmt k1 = Bind(tx, 4, ThreadTag::kThreadIdxX, Serial(k, 2, Allocate(s1, Allocate(l, use(s1, k * 4 + tx)))));
  // blockIdx.y { S2; blockIdx.x { threadIdx.x { S3, S4 } } }: S2 stays under blockIdx.y, S3 and S4 go
  // just inside blockIdx.x.
  Stmt k2 = Bind(by, 2, ThreadTag::kBlockIdxY,
                 Allocate(s2, Bind(bx, 2, ThreadTag::kBlockIdxX,
                                   Bind(tx, 4, ThreadTag::kThreadIdxX,
                                        Seq({use(s2, by * 4 + tx),
                                             Serial(k, 2, Allocate(s3, use(s3, bx * 4 + k))),
                                             IfThenElse(LT(tx, I(2)), Allocate(s4, use(s4, tx)))})))));
  // Outside any kernel a shared allocation is left alone.
  Stmt host = Serial(i, 1, Allocate(Buf("S5", {4}, Scope::kShared), Store(c, FloatImm(0), {i})));
  Stmt out = LiftSharedAllocations(Seq({k1, k2, host}));
  ExpectGolden(ToString(out), "lift_shared_allocations_nested_blocks.tir");
}

}  // namespace
}  // namespace autotune::tir
