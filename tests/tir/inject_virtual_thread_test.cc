// InjectVirtualThread (tir/lower/inject_virtual_thread.h): virtual-thread loops become unrolled copies
// of the statements that depend on them, and the program computes what it did before.
#include "tir/lower/inject_virtual_thread.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tests/tir/golden.h"
#include "tests/tir/lowering_test_util.h"
#include "tir/lower/storage_flatten.h"
#include "tir/printer.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

TEST(InjectVirtualThread, GemmWithSharedMemory) {
  Gemm g(/*shared=*/true);
  Stmt out = InjectVirtualThread(g.body);
  EXPECT_EQ(Count(out).vthread_loops, 0);
  // The shared loads do not depend on the virtual thread: emitted once. The accumulator gets one row
  // per virtual thread, and the copies of each statement that uses it are innermost.
  ExpectGolden(ToString(out), "inject_virtual_thread_gemm_shared.tir");
}

TEST(InjectVirtualThread, KeepsSemanticsOfKernelWithoutSharedMemory) {
  Gemm g(/*shared=*/false);
  ExpectNear(RunGemm(g.Func(g.body)), ReferenceGemm());
  Stmt out = InjectVirtualThread(g.body);
  EXPECT_EQ(Count(out).vthread_loops, 0);
  ExpectNear(RunGemm(g.Func(out)), ReferenceGemm());
  PrimFunc flat = StorageFlatten(g.Func(out));
  EXPECT_EQ(Count(flat.body).multi_index_accesses, 0);
  ExpectNear(RunGemm(flat), ReferenceGemm());
}

// Two vthread levels; the dependence on the virtual threads flows through local buffers.
struct NestedVThreads {
  Buffer A = Buf("A", {4, 4}), C = Buf("C", {4, 4});
  Buffer t = Buf("t", {2}, Scope::kLocal), u = Buf("u", {2}, Scope::kLocal), w = Buf("w", {1}, Scope::kLocal);
  Stmt body;
  NestedVThreads() {
    Var vy = MakeVar("vy"), vx = MakeVar("vx"), tx = MakeVar("tx"), jj = MakeVar("jj");
    Expr i = vy * 2 + tx, j = vx * 2 + jj;
    body = Bind(
        vy, 2, ThreadTag::kVThread,
        Bind(vx, 2, ThreadTag::kVThread,
             Bind(tx, 2, ThreadTag::kThreadIdxX,
                  Allocate(t, Allocate(u, Allocate(w, Seq({
                      Store(w, FloatImm(3), {I(0)}),  // independent of the virtual threads
                      Serial(jj, 2, Store(t, Load(A, {i, j}), {jj})),
                      Serial(jj, 2, Store(u, Load(t, {jj}) * Load(w, {I(0)}), {jj})),
                      Serial(jj, 2, Store(C, Load(u, {jj}) + FloatImm(1), {i, j})),
                  })))))));
  }
};

TEST(InjectVirtualThread, NestedVThreadsAndBufferDependence) {
  NestedVThreads p;
  Stmt out = InjectVirtualThread(p.body);
  EXPECT_EQ(Count(out).vthread_loops, 0);
  ExpectGolden(ToString(out), "inject_virtual_thread_nested_vthreads.tir");

  auto run = [&](const PrimFunc& f) {
    Interpreter in;
    in.Set(f.params[0], Iota(16, 1.0));
    in.Set(f.params[1], std::vector<double>(16, std::numeric_limits<double>::quiet_NaN()));
    in.Exec(f.body);
    return in.Get(f.params[1]);
  };
  std::vector<double> want = run(PrimFunc{"f", {p.A, p.C}, p.body});
  for (double v : want) EXPECT_FALSE(std::isnan(v));
  ExpectNear(run(PrimFunc{"f", {p.A, p.C}, out}), want);
  ExpectNear(run(StorageFlatten(PrimFunc{"f", {p.A, p.C}, out})), want);
}

TEST(InjectVirtualThread, BarrierIsNeverDuplicated) {
  Var vt = MakeVar("vt"), tx = MakeVar("tx");
  Buffer s = Buf("S", {4}, Scope::kShared), c = Buf("C", {8});
  Stmt body = Bind(tx, 4, ThreadTag::kThreadIdxX,
                   Bind(vt, 2, ThreadTag::kVThread,
                        Seq({Store(s, Cast(DType::kFloat32, tx), {tx}), Barrier(),
                             Store(c, Load(s, {FloorMod(tx + 1, I(4))}), {vt * 4 + tx})})));
  Stmt out = InjectVirtualThread(body);
  EXPECT_EQ(Count(out).barriers, 1);
  EXPECT_EQ(ToString(out), R"(for (tx: int32, 0, 4) thread_binding "threadIdx.x" {
  S[tx] = cast<float32>(tx)
  barrier()
  for (vt: int32, 0, 2) unrolled {
    C[((vt * 4) + tx)] = S[floormod((tx + 1), 4)]
  }
}
)");
}

TEST(InjectVirtualThread, StopsAtVectorizedLoopsAndDependentBounds) {
  Var vt = MakeVar("vt"), tx = MakeVar("tx"), v = MakeVar("v"), k = MakeVar("k");
  Buffer c = Buf("C", {16});
  Stmt body = Bind(
      vt, 2, ThreadTag::kVThread,
      Bind(tx, 2, ThreadTag::kThreadIdxX,
           Seq({Loop(v, 4, ForKind::kVectorized, Store(c, FloatImm(1), {vt * 8 + tx * 4 + v})),
                For(k, I(0), vt + 1, ForKind::kSerial, Store(c, FloatImm(2), {vt * 8 + tx * 4 + k})),
                IfThenElse(EQ(vt, I(0)), Store(c, FloatImm(3), {tx})),
                IfThenElse(EQ(tx, I(0)), Store(c, FloatImm(4), {vt}))})));
  ExpectGolden(ToString(InjectVirtualThread(body)), "inject_virtual_thread_stops.tir");
}

TEST(InjectVirtualThread, NoVThreadIsUnchanged) {
  Gemm g(/*shared=*/true);
  Stmt no_vthread = InjectVirtualThread(g.body);
  EXPECT_EQ(InjectVirtualThread(no_vthread), no_vthread);
}

}  // namespace
}  // namespace autotune::tir
