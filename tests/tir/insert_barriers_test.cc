// InsertBarriers (tir/lower/insert_barriers.h): a barrier wherever threads may read shared memory
// another thread wrote, or write what another thread may still read, and nowhere else.
#include "tir/lower/insert_barriers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/tir/golden.h"
#include "tests/tir/lowering_test_util.h"
#include "tir/lower/inject_virtual_thread.h"
#include "tir/lower/lift_shared_allocations.h"
#include "tir/lower/storage_flatten.h"
#include "tir/printer.h"
#include "tir/transform/serialize_threads.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

TEST(InsertBarriers, GemmKernel) {
  Gemm g(/*shared=*/true);
  Stmt out = InsertBarriers(LiftSharedAllocations(InjectVirtualThread(g.body)));
  // Before the loads (the previous k-step's reads must be done) and between loads and compute.
  EXPECT_EQ(Count(out).barriers, 2);
  ExpectGolden(ToString(out), "insert_barriers_gemm.tir");
  EXPECT_EQ(InsertBarriers(out), out);
}

// The whole GPU path run on the CPU: SerializeThreads splits thread loops at barriers, so the result
// is right only if the barriers are.
TEST(InsertBarriers, GemmKernelRunsCorrectlyWhenThreadsAreSerialized) {
  Gemm g(/*shared=*/true);
  Stmt lifted = LiftSharedAllocations(InjectVirtualThread(g.body));
  auto run = [&](const Stmt& s) {
    PrimFunc f = StorageFlatten(g.Func(s));
    Result<Stmt> serial = SerializeThreads(f.body);
    EXPECT_TRUE(serial.ok()) << (serial.ok() ? "" : serial.error().message);
    if (!serial.ok()) return std::vector<double>{};
    f.body = *serial;
    return RunGemm(f);
  };
  ExpectNear(run(InsertBarriers(lifted)), ReferenceGemm());
  // Without barriers the threads' shared loads are not complete when they are read.
  std::vector<double> wrong = run(lifted), want = ReferenceGemm();
  bool differs = false;
  for (size_t i = 0; i < want.size(); ++i) differs |= !(std::fabs(wrong[i] - want[i]) < 1e-4);
  EXPECT_TRUE(differs);
}

TEST(InsertBarriers, NoneWithoutSharedMemory) {
  Gemm g(/*shared=*/false);
  Stmt in = InjectVirtualThread(g.body);
  EXPECT_EQ(InsertBarriers(in), in);
  // Local buffers never need barriers.
  Var tx = MakeVar("tx");
  Buffer l = Buf("L", {4}, Scope::kLocal), c = Buf("C", {4});
  Stmt local = Bind(tx, 4, ThreadTag::kThreadIdxX,
                    Allocate(l, Seq({Store(l, FloatImm(1), {tx}), Store(c, Load(l, {FloorMod(tx + 1, I(4))}), {tx})})));
  EXPECT_EQ(InsertBarriers(local), local);
}

TEST(InsertBarriers, HoistedOutOfLoopsAndDivergentCode) {
  // The tile is loaded once under a thread-dependent predicate, then read in a loop: one barrier,
  // between the If and the loop (not inside the If, not inside the loop).
  Var bx = MakeVar("bx"), tx = MakeVar("tx"), k = MakeVar("k"), ax = MakeVar("ax");
  Buffer s = Buf("S", {6}, Scope::kShared), a = Buf("A", {12}), c = Buf("C", {8});
  Stmt load = Serial(ax, 2, IfThenElse(LT(ax * 4 + tx, I(6)), Store(s, Load(a, {bx * 6 + ax * 4 + tx}), {ax * 4 + tx})));
  Stmt use = Serial(k, 6, Store(c, Load(c, {bx * 4 + tx}) + Load(s, {k}), {bx * 4 + tx}));
  Stmt body = Bind(bx, 2, ThreadTag::kBlockIdxX,
                   Allocate(s, Bind(tx, 4, ThreadTag::kThreadIdxX, Seq({load, use}))));
  Stmt out = InsertBarriers(body);
  EXPECT_EQ(Count(out).barriers, 1);
  ExpectGolden(ToString(out), "insert_barriers_hoisted.tir");
}

TEST(InsertBarriers, WriteAfterReadAndLoopCarried) {
  // for k { S[tx] = ...; C[tx] += S[tx ^ 1] } then S written again after the loop and read back.
  Var tx = MakeVar("tx"), k = MakeVar("k");
  Buffer s = Buf("S", {4}, Scope::kShared), c = Buf("C", {4}), a = Buf("A", {16});
  Stmt loop = Serial(k, 4, Seq({Store(s, Load(a, {k * 4 + tx}), {tx}),
                                Store(c, Load(c, {tx}) + Load(s, {FloorMod(tx + 1, I(4))}), {tx})}));
  Stmt body = Bind(tx, 4, ThreadTag::kThreadIdxX,
                   Allocate(s, Seq({Store(c, FloatImm(0), {tx}), loop, Store(s, FloatImm(2), {tx}),
                                    Store(c, Load(c, {tx}) * Load(s, {FloorMod(tx + 3, I(4))}), {tx})})));
  Stmt out = InsertBarriers(body);
  ExpectGolden(ToString(out), "insert_barriers_loop_carried.tir");
}

TEST(InsertBarriers, RespectsExistingBarriersAndDivergentCode) {
  Var tx = MakeVar("tx");
  Buffer s = Buf("S", {4}, Scope::kShared), c = Buf("C", {4});
  // Already synchronized: nothing to add.
  Stmt synced = Bind(tx, 4, ThreadTag::kThreadIdxX,
                     Allocate(s, Seq({Store(s, FloatImm(1), {tx}), Barrier(),
                                      Store(c, Load(s, {FloorMod(tx + 1, I(4))}), {tx})})));
  EXPECT_EQ(InsertBarriers(synced), synced);
  // Writer and reader both under a thread-dependent condition: a barrier there could deadlock, so
  // none is put there (such a program is not a valid kernel in the first place).
  Stmt divergent = Bind(tx, 4, ThreadTag::kThreadIdxX,
                        Allocate(s, IfThenElse(LT(tx, I(2)), Seq({Store(s, FloatImm(1), {tx}),
                                                                  Store(c, Load(s, {tx + 1}), {tx})}))));
  EXPECT_EQ(InsertBarriers(divergent), divergent);
}

}  // namespace
}  // namespace autotune::tir
