// UnrollLoops (tir/lower/unroll_loops.h): loops under an auto_unroll_max_step pragma are unrolled
// when their step count fits it; other loop kinds never change.
#include "tir/lower/unroll_loops.h"

#include <gtest/gtest.h>

#include "tests/tir/golden.h"
#include "tests/tir/lowering_test_util.h"
#include "tir/lower/inject_virtual_thread.h"
#include "tir/lower/insert_barriers.h"
#include "tir/lower/lift_shared_allocations.h"
#include "tir/printer.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

TEST(UnrollLoops, CpuLoopNest) {
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k"), v = MakeVar("v"), m = MakeVar("m");
  Var p = MakeVar("p"), q = MakeVar("q");
  Buffer c = Buf("C", {64, 64});
  auto st = [&](Expr x, Expr y) { return Store(c, Load(c, {x, y}) + FloatImm(1), {x, y}); };
  Stmt body = For(
      i, I(0), I(64), ForKind::kParallel,
      Seq({
          // 4 * (2 + 1) = 12 steps <= 16: both loops unrolled.
          Serial(j, 4, Seq({Serial(k, 2, st(i, j * 2 + k)), st(i, j)})),
          // A vectorized loop keeps its kind and keeps the loop around it rolled.
          Serial(p, 2, Loop(v, 4, ForKind::kVectorized, st(i, p * 4 + v))),
          // 32 steps > 16: stays serial; its inner loop (2 steps) is unrolled.
          Serial(m, 16, Serial(q, 2, st(i, m * 2 + q))),
          // An inner pragma overrides the outer one for its subtree: 4 * 8 = 32 <= 64.
          Serial(p, 4, Serial(q, 8, st(i, p * 8 + q)), /*unroll=*/64),
      }),
      ThreadTag::kNone, /*auto_unroll_max_step=*/16);
  ExpectGolden(ToString(UnrollLoops(body)), "unroll_loops_cpu_nest.tir");
}

TEST(UnrollLoops, ExplicitUnrollAndNoPragma) {
  Var n = MakeVar("n"), i = MakeVar("i"), j = MakeVar("j");
  Buffer c = Buf("C", {64});
  Stmt body = Seq({
      For(i, I(0), n, ForKind::kUnrolled, Store(c, FloatImm(0), {i})),  // unknown trip count: serial
      Loop(j, 128, ForKind::kUnrolled, Store(c, FloatImm(1), {FloorMod(j, I(64))})),  // stays unrolled
      Serial(j, 2, Store(c, FloatImm(2), {j})),  // no pragma: stays serial
  });
  ExpectGolden(ToString(UnrollLoops(body)), "unroll_loops_explicit.tir");
}

TEST(UnrollLoops, GpuKernelWithPragmaOnBlockLoop) {
  Gemm g(/*shared=*/true, /*unroll=*/64);
  Stmt in = InsertBarriers(LiftSharedAllocations(InjectVirtualThread(g.body)));
  Stmt out = UnrollLoops(in);
  // Thread-bound loops keep their kind; init and write-back (8 * 2 steps), the loads (8 and 16
  // steps) and the compute nest (4 * 8 * 2 = 64 steps) are unrolled; the k loop around them is not.
  ExpectGolden(ToString(out), "unroll_loops_gpu_kernel.tir");
}

}  // namespace
}  // namespace autotune::tir
