// GPU validity check: usage of valid schedules, and the rejections (threads, block and grid
// dimensions, shared memory, local arrays, registers, unrolled code) with their reasons.
#include "tir/analysis/gpu_validity.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "search/default_schedule.h"
#include "tests/measure/test_kernels.h"
#include "tir/codegen/codegen_cuda.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {
namespace {

using namespace autotune::test_kernels;

PrimFunc LowerOrEmpty(const ScheduleState& state) {
  auto f = Lower(state);
  EXPECT_TRUE(f) << (f ? "" : f.error().message);
  return f ? *f : PrimFunc{"kernel", {}, Seq({})};
}

// The tiling template on gemm with fixed decisions: spatial tiles [block, vthread, thread, inner,
// innermost] of both axes, reduce tiles [outer, middle, inner].
PrimFunc TemplateGemm(const std::string& shape, std::vector<int64_t> spatial, std::vector<int64_t> reduce) {
  auto w = MakeWorkload("gemm", shape);
  EXPECT_TRUE(w);
  search::SketchDecisions d = search::DefaultDecisions(TargetKind::kCuda);
  d.tiles = [=](const search::TileRequest& r) -> std::optional<std::vector<int64_t>> {
    return r.reduce ? reduce : spatial;
  };
  Schedule s(*w, TargetKind::kCuda);
  auto r = search::ApplySketch(s, *search::FindSketch("cuda.tiled"), d);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return LowerOrEmpty(s.state());
}

std::string Reason(const PrimFunc& f, const GpuLimits& limits = {}) {
  auto r = CheckGpuValidity(f, limits);
  return r ? std::string("valid") : r.error().message;
}

// One block of `threads` threads (x, y, z) over a body.
PrimFunc Block(const std::string& name, std::vector<Buffer> params, std::array<int64_t, 3> threads, Stmt body) {
  const ThreadTag tags[3] = {ThreadTag::kThreadIdxX, ThreadTag::kThreadIdxY, ThreadTag::kThreadIdxZ};
  for (int a = 2; a >= 0; --a) {
    if (threads[a] > 1) body = ThreadLoop(MakeVar(fmt::format("t{}", a)), threads[a], tags[a], body);
  }
  return PrimFunc{name, std::move(params), ThreadLoop(MakeVar("bx"), 4, ThreadTag::kBlockIdxX, body)};
}

// ---- usage of valid schedules ----------------------------------------------------------------------

TEST(GpuValidity, DefaultGemmUsage) {
  auto w = MakeWorkload("gemm", "M=256,N=256,K=256", "bias,relu");
  ASSERT_TRUE(w);
  auto sch = search::DefaultSchedule(*w, TargetKind::kCuda);
  ASSERT_TRUE(sch);
  auto usage = CheckGpuValidity(LowerOrEmpty(sch->state()));
  ASSERT_TRUE(usage) << usage.error().message;
  EXPECT_EQ(usage->kernels, 1);
  EXPECT_EQ(usage->threads_per_block, 256);
  EXPECT_EQ(usage->shared_bytes, 2 * 1024 * 4);  // 128 x 8 tiles of A and B
  EXPECT_EQ(usage->local_bytes_per_thread, 64 * 4);  // 8 x 8 accumulators
  EXPECT_EQ(usage->estimated_registers, 64 + kRegisterOverhead);
  EXPECT_GT(usage->unrolled_statements, 64 * 8);  // the fully unrolled inner product
}

TEST(GpuValidity, DefaultSchedulesOfEveryOperatorAreValid) {
  for (const auto& [op, shape, epilogue] : std::vector<std::array<std::string, 3>>{
           {"gemm", "M=1024,N=1024,K=1024", ""},
           {"gemm", "M=100,N=75,K=33", "bias,relu"},
           {"batch_matmul", "B=8,M=128,N=128,K=64", "relu"},
           {"conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", "bias,relu"},
           {"conv2d", "N=2,C=4,H=11,W=9,K=6,R=3,S=3,stride=2,pad=1", ""},
           {"conv2d", "N=1,C=3,H=12,W=12,K=4,R=3,S=3,pad=2,dilation=2", "relu"},
           {"conv2d", "N=1,C=32,H=14,W=14,K=32,R=3,S=3,stride=2,pad=1,groups=32", "bias"},
       }) {
    SCOPED_TRACE(op + " " + shape);
    auto w = MakeWorkload(op, shape, epilogue);
    ASSERT_TRUE(w);
    auto sch = search::DefaultSchedule(*w, TargetKind::kCuda);
    ASSERT_TRUE(sch);
    PrimFunc f = LowerOrEmpty(sch->state());
    auto usage = CheckGpuValidity(f);
    ASSERT_TRUE(usage) << usage.error().message;
    // The usage describes the kernel codegen emits.
    auto m = CodegenCuda(f);
    ASSERT_TRUE(m);
    ASSERT_EQ(m->kernels.size(), 1u);
    const auto& b = m->kernels[0].block;
    EXPECT_EQ(usage->threads_per_block, b[0] * b[1] * b[2]);
    EXPECT_EQ(m->kernels[0].dynamic_shared_bytes, usage->shared_bytes > 48 * 1024 ? usage->shared_bytes : 0);
    EXPECT_EQ(usage->estimated_registers, (usage->local_bytes_per_thread + 3) / 4 + kRegisterOverhead);
  }
}

TEST(GpuValidity, RandomSchedulesAreValidOrRejectedWithAReason) {
  auto w = MakeWorkload("conv2d", "N=1,C=16,H=14,W=14,K=32,R=3,S=3,stride=2,pad=1,groups=2", "bias");
  ASSERT_TRUE(w);
  int valid = 0, invalid = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    auto sch = search::RandomSchedule(*w, TargetKind::kCuda, seed);
    if (!sch) continue;
    auto r = CheckGpuValidity(LowerOrEmpty(sch->state()));
    if (r) {
      ++valid;
      EXPECT_LE(r->threads_per_block, 1024);
      EXPECT_LE(r->shared_bytes, 227 * 1024);
      EXPECT_LE(r->estimated_registers, 255);
    } else {
      ++invalid;
      EXPECT_TRUE(r.error().message.find("exceed") != std::string::npos) << r.error().message;
    }
  }
  EXPECT_GT(valid, 0);
}

// ---- threads and dimensions ------------------------------------------------------------------------

TEST(GpuValidity, TooManyThreadsPerBlock) {
  Buffer Y = Flat("Y", 4 * 1536);
  Var bx = MakeVar("bx"), tx = MakeVar("tx");
  PrimFunc f{"big", {Y}, ThreadLoop(bx, 4, ThreadTag::kBlockIdxX, ThreadLoop(tx, 1536, ThreadTag::kThreadIdxX,
                                                                              Store(Y, F(1), {bx * 1536 + tx})))};
  EXPECT_EQ(Reason(f), "1536 threads per block exceed the limit of 1024");
  // 32 x 48 threads are as many.
  EXPECT_EQ(Reason(Block("xy", {Y}, {32, 48, 1}, Store(Y, F(1), {I(0)}))), "1536 threads per block exceed the limit of 1024");
  EXPECT_EQ(Reason(Block("ok", {Y}, {32, 32, 1}, Store(Y, F(1), {I(0)}))), "valid");
}

TEST(GpuValidity, TooManyThreadsFromATemplateSchedule) {
  // 32 x 64 threads of 4 x 2 outputs each.
  PrimFunc f = TemplateGemm("M=512,N=512,K=64", {4, 1, 32, 1, 4}, {8, 8, 1});
  EXPECT_EQ(Reason(f), "valid");
  PrimFunc g = TemplateGemm("M=512,N=512,K=64", {2, 1, 64, 1, 4}, {8, 8, 1});
  EXPECT_EQ(Reason(g), "4096 threads per block exceed the limit of 1024");
}

TEST(GpuValidity, BlockAndGridDimensions) {
  Buffer Y = Flat("Y", 16);
  EXPECT_EQ(Reason(Block("z", {Y}, {2, 2, 128}, Store(Y, F(1), {I(0)}))), "blockDim.z of 128 exceeds the limit of 64");
  Var by = MakeVar("by");
  PrimFunc f{"grid", {Y}, ThreadLoop(by, 70000, ThreadTag::kBlockIdxY, Store(Y, F(1), {I(0)}))};
  EXPECT_EQ(Reason(f), "gridDim.y of 70000 exceeds the limit of 65535");
  GpuLimits small;
  small.max_block_dims = {16, 16, 16};
  EXPECT_EQ(Reason(Block("x", {Y}, {32, 1, 1}, Store(Y, F(1), {I(0)})), small), "blockDim.x of 32 exceeds the limit of 16");
}

// ---- shared memory -------------------------------------------------------------------------------------

PrimFunc SharedBlock(std::vector<int64_t> sizes) {
  Buffer Y = Flat("Y", 64);
  Var tx = MakeVar("tx");
  std::vector<Buffer> bufs;
  std::vector<Stmt> stores;
  for (size_t i = 0; i < sizes.size(); ++i) {
    bufs.push_back(Flat(fmt::format("S{}", i), sizes[i], Scope::kShared));
    stores.push_back(Store(bufs.back(), F(1), {tx}));
  }
  stores.push_back(Barrier());
  Expr sum = F(0);
  for (const auto& b : bufs) sum = sum + Load(b, {I(63) - tx});
  stores.push_back(Store(Y, sum, {tx}));
  Stmt body = ThreadLoop(tx, 64, ThreadTag::kThreadIdxX, Seq(stores));
  for (size_t i = bufs.size(); i-- > 0;) body = Allocate(bufs[i], body);
  return PrimFunc{"smem", {Y}, ThreadLoop(MakeVar("bx"), 2, ThreadTag::kBlockIdxX, body)};
}

TEST(GpuValidity, SharedMemoryPerBlock) {
  // Regions start at 16-byte boundaries: 4 * 65 bytes take 272 with the padding after them.
  auto small = CheckGpuValidity(SharedBlock({65, 100}));
  ASSERT_TRUE(small);
  EXPECT_EQ(small->shared_bytes, 272 + 400);
  // Above the 48 KB static limit the kernel is valid with dynamic shared memory, up to 227 KB.
  auto dynamic = CheckGpuValidity(SharedBlock({16384, 16384}));
  ASSERT_TRUE(dynamic);
  EXPECT_EQ(dynamic->shared_bytes, 128 * 1024);
  EXPECT_EQ(Reason(SharedBlock({58112})), "valid");  // 227 KB exactly
  EXPECT_EQ(Reason(SharedBlock({58112, 1})), "232452 bytes of shared memory per block exceed the limit of 232448");
  GpuLimits older;  // e.g. an sm_80 part: 163 KB opt-in
  older.max_shared_bytes_per_block = 163 * 1024;
  EXPECT_EQ(Reason(SharedBlock({16384, 16384, 16384}), older),
            "196608 bytes of shared memory per block exceed the limit of 166912");
}

TEST(GpuValidity, SharedMemoryHonorsStrides) {
  auto w = MakeWorkload("gemm", "M=256,N=256,K=256");
  ASSERT_TRUE(w);
  auto sch = search::DefaultSchedule(*w, TargetKind::kCuda);
  ASSERT_TRUE(sch);
  auto plain = CheckGpuValidity(LowerOrEmpty(sch->state()));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->shared_bytes, 2 * 1024 * 4);  // A_shared 128 x 8, B_shared 8 x 128
  auto As = sch->GetStage("A_shared");
  ASSERT_TRUE(As);
  ASSERT_TRUE(sch->StorageAlign(*As, 0, 16, 1));  // rows of 8 padded to a stride of 17
  auto padded = CheckGpuValidity(LowerOrEmpty(sch->state()));
  ASSERT_TRUE(padded) << padded.error().message;
  EXPECT_EQ(padded->shared_bytes, 128 * 17 * 4 + 1024 * 4);
}

TEST(GpuValidity, TooMuchSharedMemoryFromATemplateSchedule) {
  // 1024 x 1024 block tiles with K steps of 32: 2 x 128 KB of shared memory.
  PrimFunc f = TemplateGemm("M=1024,N=1024,K=256", {1, 2, 32, 1, 16}, {8, 32, 1});
  EXPECT_EQ(Reason(f), "262144 bytes of shared memory per block exceed the limit of 232448");
}

// ---- local arrays and registers ------------------------------------------------------------------------

PrimFunc LocalBlock(int64_t threads, std::vector<int64_t> local_sizes, bool nested = true) {
  Buffer Y = Flat("Y", 1024);
  std::vector<Stmt> parts;
  std::vector<Buffer> bufs;
  for (size_t i = 0; i < local_sizes.size(); ++i) {
    bufs.push_back(Flat(fmt::format("L{}", i), local_sizes[i], Scope::kLocal));
    Var j = MakeVar("j");
    parts.push_back(Loop(j, local_sizes[i], Store(bufs.back(), F(1), {j}), ForKind::kUnrolled));
    parts.push_back(Store(Y, Load(bufs.back(), {I(0)}), {I(0)}));
  }
  Stmt body;
  if (nested) {
    body = Seq(parts);
    for (size_t i = bufs.size(); i-- > 0;) body = Allocate(bufs[i], body);
  } else {
    std::vector<Stmt> seq;
    for (size_t i = 0; i < bufs.size(); ++i) seq.push_back(Allocate(bufs[i], Seq({parts[2 * i], parts[2 * i + 1]})));
    body = Seq(seq);
  }
  return Block("regs", {Y}, {threads, 1, 1}, body);
}

TEST(GpuValidity, RegisterEstimate) {
  auto ok = CheckGpuValidity(LocalBlock(128, {16, 32}));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->local_bytes_per_thread, 4 * 48);
  EXPECT_EQ(ok->estimated_registers, 48 + kRegisterOverhead);
  // Allocations one after the other share their registers.
  auto seq = CheckGpuValidity(LocalBlock(128, {16, 32}, false));
  ASSERT_TRUE(seq);
  EXPECT_EQ(seq->estimated_registers, 32 + kRegisterOverhead);
  // Far above 255 registers the accumulators would spill.
  EXPECT_EQ(Reason(LocalBlock(32, {300})), "an estimated 316 registers per thread exceed the budget of 255 (32 threads per block)");
  // __launch_bounds__(1024) leaves 64 registers per thread.
  EXPECT_EQ(Reason(LocalBlock(1024, {48})), "valid");
  EXPECT_EQ(Reason(LocalBlock(1024, {64})), "an estimated 80 registers per thread exceed the budget of 64 (1024 threads per block)");
  // The budget counts whole warps: 520 threads take 17 warps.
  EXPECT_EQ(Reason(LocalBlock(520, {120})), "an estimated 136 registers per thread exceed the budget of 120 (520 threads per block)");
}

TEST(GpuValidity, TooManyRegistersFromATemplateSchedule) {
  // Each thread of 16 x 16 computes 16 x 16 outputs: 256 accumulators.
  PrimFunc f = TemplateGemm("M=512,N=512,K=64", {2, 1, 16, 1, 16}, {8, 8, 1});
  EXPECT_EQ(Reason(f), "an estimated 272 registers per thread exceed the budget of 255 (256 threads per block)");
}

TEST(GpuValidity, LocalArraysPerThread) {
  EXPECT_EQ(Reason(LocalBlock(32, {2000})), "8000 bytes of local arrays per thread exceed the limit of 4096");
  GpuLimits roomy;
  roomy.max_local_bytes_per_thread = 16384;
  roomy.max_unrolled_statements = 1 << 20;
  EXPECT_EQ(Reason(LocalBlock(32, {2000}), roomy),
            "an estimated 2016 registers per thread exceed the budget of 255 (32 threads per block)");
}

// ---- unrolled code -------------------------------------------------------------------------------------

TEST(GpuValidity, UnrolledCodeSize) {
  Buffer Y = Flat("Y", 1 << 16);
  Var i = MakeVar("i"), j = MakeVar("j");
  auto nest = [&](int64_t n) {
    return Block("unroll", {Y}, {32, 1, 1},
                 Loop(i, n, Loop(j, n, Store(Y, F(1), {i * n + j}), ForKind::kUnrolled), ForKind::kUnrolled));
  };
  auto ok = CheckGpuValidity(nest(100));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->unrolled_statements, 10000);
  EXPECT_EQ(Reason(nest(200)), "40000 statements of fully unrolled code exceed the limit of 32768");
  // A rolled loop counts its body once; a loop indexing a local array is unrolled by codegen.
  Buffer L = Flat("L", 64, Scope::kLocal);
  Var k = MakeVar("k"), l = MakeVar("l");
  PrimFunc rolled = Block("rolled", {Y}, {32, 1, 1},
                          Allocate(L, Loop(k, 1000, Loop(l, 64, Store(L, F(1), {l}), ForKind::kSerial))));
  auto r = CheckGpuValidity(rolled);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->unrolled_statements, 64);
}

// ---- modules of several kernels, and what cannot be planned -----------------------------------------

TEST(GpuValidity, EveryKernelOfAModuleIsChecked) {
  Buffer X = Flat("X", 4096), Y = Flat("Y", 4096);
  Var t1 = MakeVar("t"), t2 = MakeVar("t"), i = MakeVar("i");
  auto kernels = [&](int64_t second_threads) {
    return PrimFunc{"two", {X, Y}, Seq({ThreadLoop(t1, 256, ThreadTag::kThreadIdxX, Store(Y, Load(X, {t1}), {t1})),
                                        ThreadLoop(t2, second_threads, ThreadTag::kThreadIdxX, Store(Y, F(0), {t2})),
                                        Loop(i, 16, Store(Y, F(2), {i}))})};
  };
  auto ok = CheckGpuValidity(kernels(512));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->kernels, 3);
  EXPECT_EQ(ok->threads_per_block, 512);
  EXPECT_EQ(Reason(kernels(2048)), "kernel 1: 2048 threads per block exceed the limit of 1024");
}

TEST(GpuValidity, WhatHasNoCudaFormIsAnError) {
  Buffer Y = Flat("Y", 16);
  Var vt = MakeVar("vt");
  EXPECT_EQ(Reason(PrimFunc{"v", {Y}, ThreadLoop(vt, 2, ThreadTag::kVThread, Store(Y, F(0), {vt}))}),
            "a vthread loop is left after lowering");
}

}  // namespace
}  // namespace autotune::tir
