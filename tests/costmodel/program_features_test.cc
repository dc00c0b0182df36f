// Program features: fixed length and names, exact counts and access features of schedules small
// enough to work out by hand, the launch structure of the default CUDA gemm and split-K conv2d, the
// pieces of the access analysis (point evaluator, warp requests), and golden vectors that catch any
// change of the features.
#include "costmodel/program_features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <string_view>

#include "costmodel/access_features.h"
#include "costmodel/point_eval.h"
#include "costmodel/warp_request.h"
#include "search/default_schedule.h"
#include "search/tensor_core_schedule.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/printer.h"
#include "tir/schedule/schedule.h"

namespace autotune::costmodel {
namespace {

constexpr int kLoad = 0, kStore = 1;
constexpr int kGlobal = static_cast<int>(tir::Scope::kGlobal);
constexpr int kShared = static_cast<int>(tir::Scope::kShared);
constexpr int kLocal = static_cast<int>(tir::Scope::kLocal);

// The loop nest the features are read from.
tir::PrimFunc LowerOf(const tir::Schedule& sch) {
  auto f = tir::Lower(sch.state(), FeatureLowering());
  EXPECT_TRUE(f) << f.error().message;
  return *f;
}

tir::Workload Make(const std::string& op, const std::string& shape, const std::string& epilogue = "",
                   const std::string& dtype = "float32") {
  auto w = tir::MakeWorkload(op, shape, epilogue, dtype);
  EXPECT_TRUE(w) << w.error().message;
  return *w;
}

tir::PrimFunc DefaultLowered(const std::string& op, const std::string& shape, tir::TargetKind target,
                             const std::string& epilogue = "") {
  auto sch = search::DefaultSchedule(Make(op, shape, epilogue), target);
  EXPECT_TRUE(sch);
  return LowerOf(*sch);
}

float Feature(const std::vector<float>& v, std::string_view name) {
  const auto& names = FeatureNames();
  const auto it = std::find(names.begin(), names.end(), name);
  EXPECT_NE(it, names.end()) << name;
  return it == names.end() ? -1.0f : v[it - names.begin()];
}

float Log2p(double x) { return static_cast<float>(std::log2(1.0 + x)); }

TEST(ProgramFeatures, FixedLengthNamedAndVersioned) {
  EXPECT_EQ(FeatureNames().size(), 68u);
  EXPECT_STREQ(kFeatureVersion, "v4-ldmatrix-68");
  const std::set<std::string> distinct(FeatureNames().begin(), FeatureNames().end());
  EXPECT_EQ(distinct.size(), FeatureNames().size());
  const tir::Workload w = Make("conv2d", "N=1,C=8,H=10,W=10,K=8,R=3,S=3,pad=1", "bias,relu");
  for (auto target : {tir::TargetKind::kCpu, tir::TargetKind::kCuda}) {
    for (const auto& sch : search::DefaultSchedules(w, target)) {
      const auto v = ExtractFeatures(LowerOf(sch));
      ASSERT_EQ(v.size(), FeatureNames().size());
      for (float x : v) EXPECT_TRUE(std::isfinite(x) && x >= 0);
    }
  }
}

TEST(ProgramFeatures, CountsOfTheUnscheduledGemm) {
  // C[i, j] = sum_k A[i, k] * B[k, j] with M=4, N=3, K=5, nothing scheduled: 60 multiply-adds.
  const tir::Workload w = Make("gemm", "M=4,N=3,K=5");
  const tir::PrimFunc f = LowerOf(tir::Schedule(w, tir::TargetKind::kCpu));
  const ProgramCounts c = CountProgram(f);
  EXPECT_EQ(c.float_mul, 60) << tir::ToString(f.body);
  EXPECT_EQ(c.float_add, 60);
  EXPECT_EQ(c.global_loads, 3 * 60);       // A, B and the running sum C
  EXPECT_EQ(c.global_stores, 12 + 60);     // C set to 0 once, then updated 5 times per element
  EXPECT_EQ(c.global_bytes, 4 * (3 * 60 + 72));
  EXPECT_EQ(c.grid, 1);
  EXPECT_EQ(c.threads_per_block, 1);
  EXPECT_EQ(c.shared_bytes, 0);
  EXPECT_EQ(c.kernels, 1);  // a host program is one call of one thread
  EXPECT_EQ(c.total_threads, 1);
  EXPECT_EQ(c.workspace_bytes, 0);
  const auto v = ExtractFeatures(f);
  EXPECT_FLOAT_EQ(v[1], static_cast<float>(std::log2(61.0)));  // float_mul
  EXPECT_FLOAT_EQ(Feature(v, "warp_lane_utilization"), 1.0f);
}

// A float16 gemm on tensor cores, 64x64x64 in one block of 2x2 warps: (64/16) x (64/8) x (64/16) =
// 128 warp-level mma, each standing for 16*8*16 multiply-adds; each warp loads its 2 A tiles and 4
// B tiles (two at a time) per 16-deep step (4 steps) and stores its 8 accumulator tiles; copies 3
// stages deep. The
// FMA schedule of the same gemm has none of it.
TEST(ProgramFeatures, TensorCoreCountsOfAFloat16Gemm) {
  const tir::Workload w = Make("gemm", "M=64,N=64,K=64", "", "float16");
  auto sch = search::TensorCoreSchedule(w, {2, 2, 2, 4, 2, 3});
  ASSERT_TRUE(sch) << sch.error().message;
  const tir::PrimFunc f = LowerOf(*sch);
  const ProgramCounts c = CountProgram(f);
  EXPECT_EQ(c.mma, 128) << tir::ToString(f.body);
  EXPECT_EQ(c.mma_flops, 128.0 * 2 * 16 * 8 * 16);
  EXPECT_EQ(c.fragment_loads, 4 * 4 * (2 + 2));
  EXPECT_EQ(c.fragment_stores, 4 * 8);
  EXPECT_EQ(c.pipeline_stages, 2);  // 2 chunks of 32: the pipeline is as deep as the loop is long
  EXPECT_EQ(c.ldmatrix, c.fragment_loads);  // 16-bit fragments: every load is an ldmatrix
  const auto v = ExtractFeatures(f);
  EXPECT_FLOAT_EQ(Feature(v, "ldmatrix_bank_conflict"), 1.0f);  // the copies' rows are padded apart
  EXPECT_FLOAT_EQ(Feature(v, "mma"), Log2p(128));
  EXPECT_FLOAT_EQ(Feature(v, "mma_flop_fraction"), 1.0f);
  EXPECT_FLOAT_EQ(Feature(v, "mma_per_fragment_load"), 128.0f / 64);
  EXPECT_FLOAT_EQ(Feature(v, "element_bytes"), 2.0f);

  const auto fma = ExtractFeatures(DefaultLowered("gemm", "M=64,N=64,K=64", tir::TargetKind::kCuda));
  for (const char* name : {"mma", "fragment_loads", "fragment_stores", "mma_flop_fraction", "mma_per_fragment_load",
                           "ldmatrix_bank_conflict"}) {
    EXPECT_EQ(Feature(fma, name), 0.0f) << name;
  }
  EXPECT_EQ(Feature(fma, "pipeline_stages"), 1.0f);
  EXPECT_EQ(Feature(fma, "element_bytes"), 4.0f);
}

TEST(ProgramFeatures, AccessesOfTheUnscheduledGemm) {
  // for i < 4, j < 3: C[3i + j] = 0; for k < 5: C[3i + j] = C[3i + j] + A[5i + k] * B[3k + j]
  // (A: 20 floats, B: 15, C: 12). Strides are those of the innermost loop each index depends on:
  // k for A (1) and B (3), j for C (1).
  const tir::Workload w = Make("gemm", "M=4,N=3,K=5");
  const tir::PrimFunc f = LowerOf(tir::Schedule(w, tir::TargetKind::kCpu));
  const AccessFeatures a = AnalyzeAccesses(f);
  const AccessGroup& loads = a.group[kGlobal][kLoad];
  const AccessGroup& stores = a.group[kGlobal][kStore];
  EXPECT_EQ(loads.bytes, 3 * 60 * 4) << tir::ToString(f.body);
  // Each index depends on two loops whose extents multiply to the buffer's size: every element once.
  EXPECT_EQ(loads.unique_bytes, (12 + 20 + 15) * 4);
  EXPECT_DOUBLE_EQ(loads.Reuse(), 720.0 / 188.0);
  // log2(1 + stride) averaged over the three loads of equal weight: (1 + 1 + log2(4)) / 3.
  EXPECT_DOUBLE_EQ(loads.log_stride.Get(), 4.0 / 3.0);
  EXPECT_EQ(stores.bytes, (12 + 60) * 4);
  EXPECT_EQ(stores.unique_bytes, 12 * 4);  // both stores write all of C
  EXPECT_DOUBLE_EQ(stores.Reuse(), 6.0);
  EXPECT_DOUBLE_EQ(stores.log_stride.Get(), 1.0);
  for (int scope : {kShared, kLocal}) {
    for (int dir : {kLoad, kStore}) EXPECT_EQ(a.group[scope][dir].bytes, 0);
  }
  // One thread: every request is one float, in one sector of which it uses 4 of 32 bytes.
  EXPECT_EQ(a.sectors_per_request[kLoad].Get(), 1);
  EXPECT_EQ(a.sectors_per_request[kStore].Get(), 1);
  EXPECT_EQ(a.sector_efficiency[kLoad].Get(), 0.125);
  EXPECT_EQ(a.global_sectors, 3 * 60 + 72);
  EXPECT_EQ(a.bank_conflict[kLoad].weight, 0);

  const auto v = ExtractFeatures(f);
  EXPECT_FLOAT_EQ(Feature(v, "global_load_bytes"), Log2p(720));
  EXPECT_FLOAT_EQ(Feature(v, "global_load_unique_bytes"), Log2p(188));
  EXPECT_FLOAT_EQ(Feature(v, "global_load_reuse"), 720.0f / 188.0f);
  EXPECT_FLOAT_EQ(Feature(v, "global_load_stride"), 4.0f / 3.0f);
  EXPECT_FLOAT_EQ(Feature(v, "global_store_reuse"), 6.0f);
  EXPECT_FLOAT_EQ(Feature(v, "global_sectors"), Log2p(252));
  EXPECT_FLOAT_EQ(Feature(v, "shared_load_bank_conflict"), 0.0f);
}

TEST(ProgramFeatures, LaunchStructureOfTheDefaultCudaGemm) {
  // 256 threads (16 x 16, fused), 128 x 128 output tiles (2 x 2 blocks of 256 x 256), K steps of 8
  // through shared memory: 128 x 8 floats of each input per block.
  const ProgramCounts c = CountProgram(DefaultLowered("gemm", "M=256,N=256,K=256", tir::TargetKind::kCuda));
  EXPECT_EQ(c.grid, 4);
  EXPECT_EQ(c.threads_per_block, 256);
  EXPECT_EQ(c.shared_bytes, 2 * 128 * 8 * 4);
  EXPECT_EQ(c.float_mul, 256.0 * 256 * 256);  // every multiply of the product, once
  EXPECT_GT(c.shared_loads, c.global_loads);  // operands come from shared memory
  EXPECT_GT(c.barriers, 0);
  EXPECT_EQ(c.kernels, 1);
  EXPECT_EQ(c.total_threads, 4 * 256);
  EXPECT_EQ(c.warp_lanes, 4 * 256);
}

TEST(ProgramFeatures, AccessesOfTheDefaultCudaGemm) {
  // Lowered (t = threadIdx.x < 256, b = blockIdx.x < 4), per K step k_0 < 32:
  //   A_shared[4t + v] = A[(b/2) 32768 + (t/2) 256 + 8 k_0 + (t%2) 4 + v]      v < 4 vectorized
  //   B_shared[4t + v] = B[2048 k_0 + (t/32) 256 + (b%2) 128 + (t%32) 4 + v]
  //   C_local[16 x + 4 i + j] += A_shared[(x/2) 512 + (t/16) 32 + 8 i + k_1]
  //                            * B_shared[128 k_1 + (x%2) 64 + (t%16) 4 + j]   (k_1, i, j, x unrolled)
  // and at the end C[... + (t/16) 1024 + (t%16) 4 + j_3] = C_local[...] with j_3 unrolled.
  const tir::PrimFunc f = DefaultLowered("gemm", "M=256,N=256,K=256", tir::TargetKind::kCuda);
  const AccessFeatures a = AnalyzeAccesses(f);

  // Global loads: each block reads a 128-row slab of A (all of K) and a 128-column slab of B, so
  // every element is read by two blocks: 1 MiB moved, 512 KiB unique; the vector loop has stride 1.
  const AccessGroup& gl = a.group[kGlobal][kLoad];
  EXPECT_EQ(gl.bytes, 1 << 20) << tir::ToString(f.body);
  EXPECT_EQ(gl.unique_bytes, 1 << 19);
  EXPECT_EQ(gl.Reuse(), 2);
  EXPECT_EQ(gl.log_stride.Get(), 1);
  // The C store writes every element once; its innermost loop (x of the 2 x 2 sub-tiles) steps by 64.
  const AccessGroup& gs = a.group[kGlobal][kStore];
  EXPECT_EQ(gs.bytes, 256 * 256 * 4);
  EXPECT_EQ(gs.Reuse(), 1);
  EXPECT_DOUBLE_EQ(gs.log_stride.Get(), std::log2(65.0));

  // Coalescing. A fill: lanes 2r and 2r+1 read 8 consecutive floats of row r (32 bytes, one
  // sector), 16 rows: 16 sectors for 512 bytes, all used. B fill: 128 consecutive floats, 16
  // sectors. C store: 2 rows of 16 floats 16 bytes apart: 8 sectors per row, 16 for 128 bytes.
  EXPECT_EQ(a.sectors_per_request[kLoad].Get(), 16);
  EXPECT_EQ(a.sector_efficiency[kLoad].Get(), 1.0);
  EXPECT_EQ(a.sectors_per_request[kStore].Get(), 16);
  EXPECT_EQ(a.sector_efficiency[kStore].Get(), 0.25);
  // 1024 requests of 16 sectors for each input (4 blocks x 8 warps x 32 K steps), 2048 for C
  // (4 blocks x 8 warps x 64 elements per thread).
  EXPECT_EQ(a.global_sectors, 2 * 1024 * 16 + 2048 * 16);

  // Shared reads: A_shared: lanes 0-15 read word 0, lanes 16-31 word 32, both in bank 0: degree 2.
  // B_shared: lanes read words 4 (t % 16), banks 0, 4, ..., 28, each with words w and w + 32 (the
  // two half-warps read the same words): degree 2. The float4 fills are conflict-free: degree 1.
  EXPECT_EQ(a.bank_conflict[kLoad].Get(), 2);
  EXPECT_EQ(a.bank_conflict[kStore].Get(), 1);
  // Shared footprints: per block, each buffer (1024 floats) is filled whole in each of 32 K steps,
  // and read 256 threads x 8 k_1 x 64 outputs = 128 times per element per K step (2 buffers x 4
  // blocks x 32 K steps x 512 KiB = 128 MiB in all).
  const AccessGroup& ss = a.group[kShared][kStore];
  EXPECT_EQ(ss.unique_bytes, 4 * 2 * 4096);
  EXPECT_EQ(ss.Reuse(), 32);
  EXPECT_EQ(a.group[kShared][kLoad].bytes, 128 << 20);
  EXPECT_EQ(a.group[kShared][kLoad].Reuse(), 4096);
  // C_local: 64 floats per thread, 16 apart in the innermost (sub-tile) loop.
  const AccessGroup& ll = a.group[kLocal][kLoad];
  EXPECT_EQ(ll.unique_bytes, 1024 * 64 * 4);
  EXPECT_DOUBLE_EQ(ll.log_stride.Get(), std::log2(17.0));
}

TEST(ProgramFeatures, LaunchOfTheSplitKConv) {
  // Split-K: a partial-sum kernel (256 blocks of 112 threads) writes a 401408-float workspace that a
  // second kernel (98 blocks of 256 threads) reduces. The grid is the larger kernel's, not a product.
  const tir::Workload w = Make("conv2d", "N=1,C=512,H=7,W=7,K=512,R=3,S=3,pad=1");
  const auto schedules = search::DefaultSchedules(w, tir::TargetKind::kCuda);
  ASSERT_GE(schedules.size(), 2u);
  const tir::PrimFunc f = LowerOf(schedules[1]);
  const ProgramCounts c = CountProgram(f);
  EXPECT_EQ(c.kernels, 2) << tir::ToString(f.body);
  EXPECT_EQ(c.grid, 256);
  EXPECT_EQ(c.threads_per_block, 256);
  EXPECT_EQ(c.total_threads, 256 * 112 + 98 * 256);
  EXPECT_EQ(c.warp_lanes, 256 * 128 + 98 * 256);  // 112 threads take 4 warps
  EXPECT_EQ(c.workspace_bytes, 401408 * 4);
}

TEST(PointEvaluator, EvaluatesIndexArithmeticAtEveryPoint) {
  PointEvaluator eval;
  eval.Reset(4);
  const tir::Var x = tir::MakeVar("x"), y = tir::MakeVar("y");
  const std::array<int64_t, 4> xs = {-3, -1, 0, 7};
  eval.Bind(x.get(), xs.data());
  eval.Bind(y.get(), 2);
  std::array<int64_t, PointEvaluator::kMaxPoints> out{};
  // floordiv and floormod round towards minus infinity.
  EXPECT_FALSE(eval.Eval(tir::FloorDiv(x, tir::IntImm(2)), out.data()));
  EXPECT_EQ((std::array<int64_t, 4>{out[0], out[1], out[2], out[3]}), (std::array<int64_t, 4>{-2, -1, 0, 3}));
  EXPECT_FALSE(eval.Eval(tir::FloorMod(x, tir::IntImm(2)), out.data()));
  EXPECT_EQ((std::array<int64_t, 4>{out[0], out[1], out[2], out[3]}), (std::array<int64_t, 4>{1, 1, 0, 1}));
  EXPECT_FALSE(eval.Eval(tir::FloorDiv(x, tir::IntImm(3)), out.data()));  // not a power of two
  EXPECT_EQ((std::array<int64_t, 4>{out[0], out[1], out[2], out[3]}), (std::array<int64_t, 4>{-1, -1, 0, 2}));
  EXPECT_FALSE(eval.Eval(tir::FloorMod(x, tir::IntImm(3)), out.data()));
  EXPECT_EQ((std::array<int64_t, 4>{out[0], out[1], out[2], out[3]}), (std::array<int64_t, 4>{0, 2, 0, 1}));
  // select(x < y, x * y, y - x); a value that does not depend on x is computed once.
  EXPECT_FALSE(eval.Eval(tir::Select(tir::LT(x, y), x * y, y - x), out.data()));
  EXPECT_EQ((std::array<int64_t, 4>{out[0], out[1], out[2], out[3]}), (std::array<int64_t, 4>{-6, -2, 0, -5}));
  EXPECT_TRUE(eval.Eval(y * 3 + 1, out.data()));
  EXPECT_EQ(out[0], 7);
  // Unbound variables are 0, division by 0 gives 0.
  EXPECT_TRUE(eval.Eval(tir::FloorDiv(tir::IntImm(5), tir::MakeVar("z")) + 1, out.data()));
  EXPECT_EQ(out[0], 1);
}

// A request of `lanes` x `vector` points at element indices base + lane * lane_stride + element.
struct Request {
  std::array<int64_t, 128> address{};
  std::array<bool, 128> active{};
  WarpRequest r;
  Request(int lanes, int vector, int64_t lane_stride, int element_bytes = 4, int64_t base = 0) {
    for (int p = 0; p < lanes * vector; ++p) {
      address[p] = (base + p / vector * lane_stride + p % vector) * element_bytes;
      active[p] = true;
    }
    r = {address.data(), active.data(), lanes, vector, element_bytes};
  }
};

TEST(WarpRequest, SectorsOfAGlobalRequest) {
  EXPECT_EQ(CountSectors(Request(32, 1, 1).r).sectors, 4);  // 128 consecutive bytes
  EXPECT_EQ(CountSectors(Request(32, 1, 1).r).useful_bytes, 128);
  EXPECT_EQ(CountSectors(Request(32, 1, 1, 4, 1).r).sectors, 5);  // one float off the sector boundary
  EXPECT_EQ(CountSectors(Request(32, 1, 2).r).sectors, 8);        // every other float
  EXPECT_EQ(CountSectors(Request(32, 1, 8).r).sectors, 32);       // one sector per lane
  EXPECT_EQ(CountSectors(Request(32, 1, 0).r).sectors, 1);        // all lanes read one float
  EXPECT_EQ(CountSectors(Request(32, 1, 0).r).useful_bytes, 4);
  EXPECT_EQ(CountSectors(Request(32, 4, 4).r).sectors, 16);  // float4 per lane: 512 bytes
  Request half(32, 1, 1);
  std::fill(half.active.begin() + 16, half.active.end(), false);
  EXPECT_EQ(CountSectors(half.r).sectors, 2);
}

TEST(WarpRequest, BankConflictsOfASharedRequest) {
  EXPECT_EQ(BankConflictDegree(Request(32, 1, 1).r), 1);   // one word per bank
  EXPECT_EQ(BankConflictDegree(Request(32, 1, 0).r), 1);   // a broadcast
  EXPECT_EQ(BankConflictDegree(Request(32, 1, 2).r), 2);   // 16 banks, two words each
  EXPECT_EQ(BankConflictDegree(Request(32, 1, 32).r), 32);  // a column of a 32-wide tile
  EXPECT_EQ(BankConflictDegree(Request(32, 1, 33).r), 1);   // the same column, padded
  EXPECT_EQ(BankConflictDegree(Request(32, 4, 4).r), 1);    // float4: 4 quarter-warps, no conflict
  // float2 at every other float2: each half-warp covers 64 words, two per bank used.
  EXPECT_EQ(BankConflictDegree(Request(32, 2, 4).r), 2);
  EXPECT_EQ(BankConflictDegree(Request(32, 1, 1, 8).r), 1);  // doubles: two half-warps of 32 words
  Request none(32, 1, 1);
  std::fill(none.active.begin(), none.active.end(), false);
  EXPECT_EQ(BankConflictDegree(none.r), 0);
}

// One 8x8 matrix a phase, eight 16-byte rows: rows 128 bytes apart all fall in banks 0-3; 64 apart,
// in banks 0-3 and 16-19, four rows each; 32 apart, two each; padded by 16 bytes, they cover the 32.
TEST(WarpRequest, BankConflictsOfAnLdmatrix) {
  auto rows = [](int64_t apart, int n) {
    std::vector<int64_t> r;
    for (int i = 0; i < n; ++i) r.push_back(i * apart);
    return r;
  };
  EXPECT_EQ(LdmatrixConflictDegree(rows(128, 8)), 8);
  EXPECT_EQ(LdmatrixConflictDegree(rows(64, 8)), 4);
  EXPECT_EQ(LdmatrixConflictDegree(rows(32, 8)), 2);
  EXPECT_EQ(LdmatrixConflictDegree(rows(144, 32)), 1);  // .x4: four phases, each conflict-free
  EXPECT_EQ(LdmatrixConflictDegree(rows(16, 16)), 1);   // contiguous rows
}

// Golden vectors: any change of these values changes what a stored model was trained on. If the
// change is intended, bump kFeatureVersion (program_features.h) and update the values here.
void ExpectGolden(const std::vector<float>& v, const std::vector<float>& golden, const char* what) {
  ASSERT_EQ(v.size(), golden.size()) << what << ": the feature vector changed length; bump kFeatureVersion";
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_NEAR(v[i], golden[i], 1e-4) << what << ": feature " << i << " (" << FeatureNames()[i]
                                       << ") changed; if intended, bump kFeatureVersion and update the golden values";
  }
}

TEST(ProgramFeatures, GoldenVectorOfTheDefaultCudaGemm) {
  const std::vector<float> golden = {
      24, 24, 0, 0, 0, 28.603626, 0, 0,                                                  // 0-7
      0, 0, 18.000006, 25, 24.005625, 16.000023, 18.000006, 24.005625,                   // 8-15
      20.32193, 16.000023, 2.321928, 8.005625, 24.420486, 18.000006, 13.000176, 8.005625,  // 16-23
      4.733353, 1, 10.001409, 1, 0, 20.000002, 19.000002, 2,                             // 24-31
      1, 18.000006, 18.000006, 1, 6.022368, 27, 15.000044, 4096,                         // 32-39
      3.011184, 20.000002, 15.000044, 32, 1, 26.005625, 18.000006, 257,                  // 40-47
      4.087463, 26.005625, 18.000006, 257, 4.087463, 16, 16, 1,                          // 48-55
      0.25, 16.000023, 2, 1,                                                             // 56-59
      0, 0, 0, 0, 0, 1, 4, 0,                                                            // 60-67
  };
  ExpectGolden(ExtractFeatures(DefaultLowered("gemm", "M=256,N=256,K=256", tir::TargetKind::kCuda)), golden,
               "default cuda gemm 256^3");
}

// cpu.tiled's hand-picked schedule (the default cpu schedule when these values were taken).
TEST(ProgramFeatures, GoldenVectorOfTheTiledCpuConv) {
  const std::vector<float> golden = {
      15.833706, 15.813807, 0, 9.645658, 0, 21.142208, 18.62114, 15.813807,  // 0-7
      0, 0, 17.412048, 0, 0, 15.853333, 0, 0,                                // 8-15
      19.833683, 0, 1, 1, 0, 15.853333, 0, 0,                                // 16-23
      0.169925, 1, 1, 1, 11.644307, 19.412043, 13.092922, 79.853477,         // 24-31
      0.995413, 17.853315, 12.644082, 37, 1, 0, 0, 0,                        // 32-39
      0, 0, 0, 0, 0, 0, 0, 0,                                                // 40-47
      0, 0, 0, 0, 0, 1.665138, 2, 0.436927,                                  // 48-55
      0.625, 15.319143, 0, 0,                                                // 56-59
      0, 0, 0, 0, 0, 1, 4, 0,                                                // 60-67
  };
  auto sch = search::HandPickedSchedule(Make("conv2d", "N=1,C=8,H=10,W=10,K=8,R=3,S=3,pad=1", "bias,relu"),
                                       *search::FindSketch("cpu.tiled"));
  ASSERT_TRUE(sch) << sch.error().message;
  ExpectGolden(ExtractFeatures(LowerOf(*sch)), golden, "cpu.tiled conv2d with bias, relu");
}

}  // namespace
}  // namespace autotune::costmodel
