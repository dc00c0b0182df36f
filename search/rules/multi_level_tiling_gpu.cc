// multi_level_tiling_gpu: SSSRRSRS tiling of the stage that writes the accumulators out. Its spatial
// loops are tiled at five levels [block, virtual thread, thread, inner, innermost (at most 16)] and
// bound to blockIdx.x, vthread and threadIdx.x (each level fused over the axes), except the leading
// axes that go to blocks whole (split-K's parts: partial sums of different parts share no data, so
// a block holding several would only multiply its shared memory); the accumulator is
// computed per thread, its reduction loops tiled at three levels and ordered R R S R S so that the
// outer reduction tile is where the shared copies are refilled.
#include <fmt/format.h>

#include <array>
#include <optional>

#include "search/rules/builtin_rules.h"
#include "search/rules/joint_tiles.h"
#include "search/rules/rule_util.h"
#include "tir/analysis/gpu_validity.h"
#include "tir/schedule/perfect_tile.h"

namespace autotune::search {
namespace {

constexpr int64_t kMaxInnermostSpatial = 16;
// Limits of every CUDA GPU: threads per block, and accumulators a thread can keep in its 255 registers.
constexpr int64_t kMaxThreadsPerBlock = tir::GpuLimits{}.max_threads_per_block;
constexpr int64_t kMaxOutputsPerThread = 256;
// Redraws of a sample that breaks one of the limits above (cheap: no primitive runs for them).
constexpr int kJointDraws = 256;
// Threads per block of the classes a sample of spatial tiles aims at, one class picked uniformly
// (upper bounds, exclusive: [1, 64), [64, 128), ..., [512, 1025)). Drawn without a class, samples
// favour small blocks, because a block of many threads fails the register budget more often: 44 of
// 48 samples of a batch-16 3x3 convolution (128 channels, 28x28) had fewer than 256 threads, while
// the fastest kernel found for it had 896.
constexpr std::array<int64_t, 5> kBlockClassUpper = {64, 128, 256, 512, kMaxThreadsPerBlock + 1};
// Reduction elements per axis and refill of the shared copies (middle x inner tile) in a sample.
// Mutation may exceed it: the validity check judges those.
constexpr int64_t kMaxReductionStep = 32;

// Registers a thread may use when a block has `threads` threads (the GPU validity check's budget).
int64_t RegisterBudget(int64_t threads) {
  const tir::GpuLimits limits;
  const int64_t warps = (threads + 31) / 32;
  return std::min(limits.max_registers_per_thread, limits.max_registers_per_block / (32 * warps));
}

// Threads per block and accumulators per thread of spatial tiles [block, vthread, thread, inner, innermost].
std::pair<int64_t, int64_t> ThreadsAndAccumulators(const std::vector<std::vector<int64_t>>& tiles) {
  int64_t threads = 1, accumulators = 1;
  for (const auto& t : tiles) {
    threads *= t[2];
    accumulators *= t[1] * t[3] * t[4];
  }
  return {threads, accumulators};
}

// The spatial tiles of out_loops[whole..]: the decider's where it decides; the others drawn together
// and redrawn (up to kJointDraws times) until the block has at most kMaxThreadsPerBlock threads and a
// thread at most kMaxOutputsPerThread accumulators within its register budget. Drawn axis by axis,
// most prime factors of a large extent land in the per-thread levels (1024 = 2^10 over five levels:
// about 2^6 per axis per thread), which no GPU can hold: 1 in 300 gemm 1024^3 samples was valid, 299 in
// 300 are now; among the valid ones the joint draw keeps the per-axis distribution.
Result<std::vector<std::vector<int64_t>>> SpatialTiles(tir::Schedule& sch, const std::vector<tir::LoopRV>& loops,
                                                       int whole, const SketchDecisions& d) {
  const int ns = static_cast<int>(loops.size());
  JointTiling j{{}, {}, 5, std::vector<int64_t>(ns - whole, kMaxInnermostSpatial)};
  for (int a = whole; a < ns; ++a) {
    AT_TRY(extent, LoopExtent(sch, loops[a]));
    j.extents.push_back(extent);
    j.decided.push_back(d.tiles(TileRequest{false, a, ns, extent, 5, kMaxInnermostSpatial}));
  }
  // The block size class this sample aims at (see kBlockClassUpper); the first valid draw when no
  // draw lands in it (a small workload has no large blocks). Decided tiles are taken as given (tests
  // probe the validity check so).
  const int64_t cls = sch.rng().UniformInt(0, static_cast<int64_t>(kBlockClassUpper.size()) - 1);
  const int64_t lower = cls == 0 ? 1 : kBlockClassUpper[cls - 1];
  auto valid = [](const AxisTiles& t) {
    const auto [threads, accumulators] = ThreadsAndAccumulators(t);
    return threads <= kMaxThreadsPerBlock && accumulators <= kMaxOutputsPerThread &&
           accumulators + tir::kRegisterOverhead <= RegisterBudget(threads);
  };
  auto in_class = [&](const AxisTiles& t) {
    const int64_t threads = ThreadsAndAccumulators(t).first;
    return threads >= lower && threads < kBlockClassUpper[cls];
  };
  AxisTiles last;
  if (auto tiles = DrawJointTiles(sch.rng(), j, kJointDraws, valid, in_class, &last)) return *tiles;
  const auto [threads, accumulators] = ThreadsAndAccumulators(last);
  // Rejected before anything is lowered: the validity check would refuse these anyway.
  if (threads > kMaxThreadsPerBlock) {
    return MakeError(fmt::format("{} threads per block exceed {}", threads, kMaxThreadsPerBlock));
  }
  return MakeError(fmt::format("{} accumulators per thread exceed {}", accumulators, kMaxOutputsPerThread));
}

// Reduction tiles [outer, middle, inner] of one axis: the decider's, or drawn (redrawn up to
// kJointDraws times) until the step middle x inner is at most kMaxReductionStep.
Result<std::vector<int64_t>> ReductionTiles(tir::Schedule& sch, const TileRequest& req, const SketchDecisions& d) {
  std::vector<int64_t> t;
  if (auto decided = d.tiles(req)) {
    return *decided;  // taken as given
  } else {
    for (int draw = 0; draw < kJointDraws; ++draw) {
      t = tir::RandomPerfectTile(sch.rng(), req.extent, req.levels, req.max_innermost);
      if (t[1] * t[2] <= kMaxReductionStep) break;
    }
  }
  if (t.size() == 3 && t[1] * t[2] > kMaxReductionStep) {
    // Rejected before anything is lowered: most such samples overflow shared memory.
    return MakeError(fmt::format("a reduction step of {} exceeds {}", t[1] * t[2], kMaxReductionStep));
  }
  return t;
}

// Reduction tiles of every reduction axis (each as ReductionTiles). Behind an im2col matrix the
// shared copy holds a step's every reduction element (no window overlap to share), so the step's
// product over the axes is capped as a gemm's k-tile is; drawn per axis, a channel step of 32
// with a 3x3 window step made a tile nine times a gemm's, and about half the samples of a batch-16
// 3x3 convolution went over shared memory. The joint draw is redrawn up to kJointDraws times.
Result<std::vector<std::vector<int64_t>>> AllReductionTiles(tir::Schedule& sch, const std::vector<int64_t>& extents,
                                                            bool joint_cap, const SketchDecisions& d) {
  const int nr = static_cast<int>(extents.size());
  std::vector<std::vector<int64_t>> tiles(nr);
  bool any_random = false;
  for (int r = 0; r < nr; ++r) any_random = any_random || !d.tiles(TileRequest{true, r, nr, extents[r], 3, 0});
  joint_cap = joint_cap && any_random;  // decided tiles are taken as given (mutation may exceed the cap)
  int64_t step = 1;
  for (int draw = 0; draw < (joint_cap ? kJointDraws : 1); ++draw) {
    step = 1;
    for (int r = 0; r < nr; ++r) {
      AT_TRY(t, ReductionTiles(sch, TileRequest{true, r, nr, extents[r], 3, 0}, d));
      tiles[r] = t;
      step *= t[1] * t[2];
    }
    if (step <= kMaxReductionStep) break;
  }
  if (joint_cap && step > kMaxReductionStep) {
    return MakeError(fmt::format("an im2col reduction step of {} exceeds {}", step, kMaxReductionStep));
  }
  return tiles;
}

class MultiLevelTilingGpu final : public CudaRule {
 public:
  std::string_view Name() const override { return "multi_level_tiling_gpu"; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    using tir::LoopRV;
    const SketchDecisions& d = ctx.decisions;
    AT_TRY(out_loops, sch.GetLoops(ctx.main_stage));
    const int ns = static_cast<int>(out_loops.size());
    std::vector<LoopRV> blocks, vthreads, threads, rests;
    std::vector<tir::IntRV> inner_factors;
    const int whole = std::min(ctx.block_only_axes, ns);
    for (int a = 0; a < whole; ++a) blocks.push_back(out_loops[a]);
    AT_TRY(spatial, SpatialTiles(sch, out_loops, whole, d));
    for (int a = whole; a < ns; ++a) {
      AT_TRY(t, sch.SamplePerfectTile(out_loops[a], 5, kMaxInnermostSpatial, spatial[a - whole]));
      AT_TRY(parts, sch.Split(out_loops[a], {t[0], t[1], t[2], std::monostate{}}));
      blocks.push_back(parts[0]);
      vthreads.push_back(parts[1]);
      threads.push_back(parts[2]);
      rests.push_back(parts[3]);
      ctx.thread_factors.push_back(t[2]);
      inner_factors.push_back(t[4]);
    }
    std::vector<LoopRV> order = blocks;
    order.insert(order.end(), vthreads.begin(), vthreads.end());
    order.insert(order.end(), threads.begin(), threads.end());
    order.insert(order.end(), rests.begin(), rests.end());
    AT_TRY_VOID(sch.Reorder(order));
    AT_TRY(bx, FuseIfMany(sch, blocks));
    AT_TRY_VOID(sch.Bind(bx, tir::ThreadTag::kBlockIdxX));
    AT_TRY(vx, FuseIfMany(sch, vthreads));
    AT_TRY_VOID(sch.Bind(vx, tir::ThreadTag::kVThread));
    AT_TRY(tx, FuseIfMany(sch, threads));
    AT_TRY_VOID(sch.Bind(tx, tir::ThreadTag::kThreadIdxX));
    // Register accumulation per thread: R R S R S.
    AT_TRY_VOID(sch.ComputeAt(ctx.accumulator, tx));
    AT_TRY(ll, sch.GetLoops(ctx.accumulator));
    std::vector<LoopRV> s3, s4, r0, r1, r2;
    std::vector<LoopRV> lorder(ll.begin(), ll.begin() + whole);  // extent 1 in a thread
    for (int a = whole; a < ns; ++a) {
      AT_TRY(parts, sch.Split(ll[a], {std::monostate{}, inner_factors[a - whole]}));
      s3.push_back(parts[0]);
      s4.push_back(parts[1]);
    }
    const int nr = static_cast<int>(ll.size()) - ns;
    std::vector<int64_t> reduce_extents;
    for (int r = 0; r < nr; ++r) {
      AT_TRY(extent, LoopExtent(sch, ll[ns + r]));
      reduce_extents.push_back(extent);
    }
    AT_TRY(reduce_tiles, AllReductionTiles(sch, reduce_extents, !ctx.roles.reindexed.empty(), d));
    for (int r = 0; r < nr; ++r) {
      AT_TRY(t, sch.SamplePerfectTile(ll[ns + r], 3, 0, reduce_tiles[r]));
      AT_TRY(parts, sch.Split(ll[ns + r], {t[0], t[1], t[2]}));
      r0.push_back(parts[0]);
      r1.push_back(parts[1]);
      r2.push_back(parts[2]);
    }
    lorder.insert(lorder.end(), r0.begin(), r0.end());
    for (auto* group : {&r1, &s3, &r2, &s4}) lorder.insert(lorder.end(), group->begin(), group->end());
    AT_TRY_VOID(sch.Reorder(lorder));
    ctx.block_loop = bx;
    if (r0.empty()) return MakeError("the tiled stage has no reduction loop");
    ctx.reduce_outer_loops = r0;
    ctx.tiled = true;
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeMultiLevelTilingGpuRule() { return std::make_unique<MultiLevelTilingGpu>(); }

}  // namespace autotune::search
