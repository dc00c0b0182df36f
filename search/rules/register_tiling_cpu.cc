// register_tiling_cpu: the output tile kept in vector registers across the whole reduction. The
// spatial loops of the stage that writes the accumulators out are tiled at three levels [parallel,
// outer, register]; the parallel level is fused and runs in parallel; the accumulator (cache_write
// _local) is computed at the last outer loop, so its loops are the reduction loops around the
// register tile, whose innermost loop is vectorized (or, sampled, it spans the parallel tile with
// blocks of its longest reduction axis around the outer tile). The C compiler unrolls the tile's other loops
// and keeps the tile in registers: a gemm 512^3 kernel so made ran at 324 GFLOP/s on 2 AVX-512
// cores against 74 for the same tile accumulated in the output (docs/BENCHMARKS.md, "CPU"). The
// operand copy of copy_operand_cpu, where there is one, is computed per parallel tile.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "search/rules/builtin_rules.h"
#include "search/rules/joint_tiles.h"
#include "search/rules/rule_util.h"
#include "tir/schedule/perfect_tile.h"

namespace autotune::search {
namespace {

// Elements of the register tile: three quarters of the vector registers (the others hold the operands),
// 24 of AVX-512's 32 registers of 16 float32 lanes, 12 of AVX2's 16 of 8.
int64_t MaxRegisterTile(const tir::CpuVectors& v) { return int64_t{v.registers} * 3 / 4 * v.float_lanes; }
// The register tile's extent on the innermost (vectorized) axis, and on each other axis (unrolled).
constexpr int64_t kMaxVectorExtent = 64, kMaxUnrolledExtent = 8;
// The vectorized extent a sample aims at: whole vectors of 8 lanes (4 on SSE) where the axis allows.
int64_t SampledLanes(const tir::CpuVectors& v) { return std::min(8, v.float_lanes); }
constexpr int kJointDraws = 256;

// The register tile's largest extent on axis `a`, `va` being the vectorized one.
int64_t MaxRegisterExtent(int a, int va) { return a == va ? kMaxVectorExtent : kMaxUnrolledExtent; }

int64_t RegisterElements(const std::vector<std::vector<int64_t>>& tiles) {
  int64_t elements = 1;
  for (const auto& t : tiles) elements *= t.back();
  return elements;
}

bool FitsRegisters(const std::vector<std::vector<int64_t>>& tiles, const std::vector<int64_t>& extents, int va,
                   const tir::CpuVectors& v) {
  const int64_t vector = tiles[va].back(), lanes = SampledLanes(v);
  return RegisterElements(tiles) <= MaxRegisterTile(v) && (vector % lanes == 0 || extents[va] % lanes != 0);
}

// Tiles [parallel, outer, register] of every spatial axis: the decider's where it decides; the others
// drawn together (redrawn up to kJointDraws times) until the register tile fits (FitsRegisters).
Result<std::vector<std::vector<int64_t>>> SpatialTiles(tir::Schedule& sch, const std::vector<tir::LoopRV>& loops,
                                                       int va, const SketchDecisions& d) {
  const int ns = static_cast<int>(loops.size());
  JointTiling j{{}, {}, 3, {}};
  for (int a = 0; a < ns; ++a) {
    AT_TRY(extent, LoopExtent(sch, loops[a]));
    j.extents.push_back(extent);
    j.max_innermost.push_back(MaxRegisterExtent(a, va));
    j.decided.push_back(d.tiles(TileRequest{false, a, ns, extent, 3, MaxRegisterExtent(a, va)}));
  }
  AxisTiles last;
  const tir::CpuVectors& vectors = sch.full_target().cpu;
  auto fits = [&](const AxisTiles& t) { return FitsRegisters(t, j.extents, va, vectors); };
  if (auto tiles = DrawJointTiles(sch.rng(), j, kJointDraws, fits, {}, &last)) return *tiles;
  return MakeError(fmt::format("no register tile of at most {} elements drawn (last: {})", MaxRegisterTile(vectors),
                               RegisterElements(last)));
}

// The accumulator's loops in `order`, then its register tile's in storage order (the vectorized
// axis `va` last); where that is not the output's last axis, its buffer is laid out so too.
Result<void> OrderAccumulator(tir::Schedule& sch, const SketchContext& ctx, std::vector<tir::LoopRV> order,
                              const std::vector<tir::LoopRV>& registers, int va) {
  const int ns = static_cast<int>(registers.size());
  const std::vector<int64_t> storage = MovedLast(ns, va);
  for (int64_t a : storage) order.push_back(registers[a]);
  AT_TRY_VOID(sch.Reorder(order));
  AT_TRY_VOID(sch.Vectorize(registers[va]));
  if (va != ns - 1) AT_TRY_VOID(sch.ReorderStorage(ctx.accumulator, storage));
  return {};
}

// The accumulator at the last outer loop: its reduction loops around its register tile.
Result<void> PlaceAccumulator(tir::Schedule& sch, const SketchContext& ctx, tir::LoopRV at, int ns, int va) {
  AT_TRY_VOID(sch.ComputeAt(ctx.accumulator, at));
  AT_TRY(acc_loops, sch.GetLoops(ctx.accumulator));
  return OrderAccumulator(sch, ctx, std::vector<tir::LoopRV>(acc_loops.begin() + ns, acc_loops.end()),
                          std::vector<tir::LoopRV>(acc_loops.begin(), acc_loops.begin() + ns), va);
}

// Elements of an accumulator that spans the parallel tile (SketchDecisions::reduce_block): 32 KB,
// which leaves most of the L1 cache to a block's operands.
constexpr int64_t kMaxSpanningAccumulator = 8192;

// The block of reduction axis `axis` (its index among the accumulator's reduction loops) a sample
// takes around the outer tile, or nullopt for none: offered where the outer tile repeats and its
// accumulator fits kMaxSpanningAccumulator. Blocked, a C=512 7x7 layer's weights stay in L1 across its
// 7 rows of register tiles: 0.675 ms against 0.705 unblocked on 2 AVX-512 cores (oneDNN: 0.667).
Result<std::optional<tir::IntRV>> SampleReduceBlock(tir::Schedule& sch, const SketchContext& ctx, int ns,
                                                    const std::vector<std::vector<int64_t>>& tiles, int* axis) {
  int64_t repeats = 1, elements = 1;
  for (const auto& t : tiles) {
    repeats *= t[1];
    elements *= t[1] * t[2];
  }
  AT_TRY(loops, sch.GetLoops(ctx.accumulator));
  int64_t longest = 0;
  for (size_t r = ns; r < loops.size(); ++r) {
    AT_TRY(extent, LoopExtent(sch, loops[r]));
    if (extent > longest) std::tie(longest, *axis) = std::pair{extent, static_cast<int>(r) - ns};
  }
  std::vector<int64_t> sizes;
  for (int64_t b : {8, 16, 32, 64}) {
    if (b < longest && longest % b == 0) sizes.push_back(b);
  }
  if (repeats == 1 || elements > kMaxSpanningAccumulator || sizes.empty()) return std::optional<tir::IntRV>();
  // Two samples: whether to block (it shapes the schedule, so evolution keeps it), then the block's
  // size, which feeds the split and mutates as other split factors. The decider picks among both:
  // 0 for none, else 1 + the index of a size.
  std::vector<int64_t> candidates = {0};
  candidates.insert(candidates.end(), sizes.begin(), sizes.end());
  std::optional<int64_t> blocked_decision, size_decision;
  if (const std::optional<int64_t> decided = ctx.decisions.reduce_block(candidates)) {
    blocked_decision = *decided > 0 ? 1 : 0;
    size_decision = std::max<int64_t>(*decided - 1, 0);
  }
  AT_TRY(blocked, sch.SampleCategorical({0, 1}, {0.5, 0.5}, blocked_decision));
  if (*sch.Resolve(blocked) == 0) return std::optional<tir::IntRV>();
  AT_TRY(size, SampleChoice(sch, sizes, [&](const std::vector<int64_t>&) { return size_decision; }));
  return std::optional<tir::IntRV>(size);
}

// The accumulator spanning the parallel tile at `at`, its loops [reduction blocks, outer tile, the
// rest of the reduction, register tile]: the register tile is loaded and stored once a block.
Result<void> PlaceSpanningAccumulator(tir::Schedule& sch, const SketchContext& ctx, tir::LoopRV at, int va,
                                      const std::vector<std::vector<tir::IntRV>>& tile_rvs, int axis, tir::IntRV block) {
  const int ns = static_cast<int>(tile_rvs.size());
  AT_TRY_VOID(sch.ComputeAt(ctx.accumulator, at));
  AT_TRY(loops, sch.GetLoops(ctx.accumulator));
  std::vector<tir::LoopRV> outer, registers;
  for (int a = 0; a < ns; ++a) {
    // The outer tile's extent is inferred: the loops span the whole output until lowering bounds them.
    AT_TRY(parts, sch.Split(loops[a], {std::monostate{}, tile_rvs[a][2]}));
    outer.push_back(parts[0]);
    registers.push_back(parts[1]);
  }
  AT_TRY(blocks, sch.Split(loops[ns + axis], {std::monostate{}, block}));
  std::vector<tir::LoopRV> order = {blocks[0]};
  order.insert(order.end(), outer.begin(), outer.end());
  for (size_t r = ns; r < loops.size(); ++r) order.push_back(static_cast<int>(r) == ns + axis ? blocks[1] : loops[r]);
  return OrderAccumulator(sch, ctx, order, registers, va);
}

// copy_operand_cpu's copy, per parallel tile, its stores vectorized along its last dimension in
// memory: a channels-last copy of weights (`channels_last`) has its first loop moved innermost.
Result<void> PlaceOperandCopy(tir::Schedule& sch, tir::StageRV copy, tir::LoopRV at, bool channels_last) {
  AT_TRY_VOID(sch.ComputeAt(copy, at));
  AT_TRY(loops, sch.GetLoops(copy));
  if (channels_last) {
    std::vector<tir::LoopRV> order;
    for (int64_t d : MovedLast(loops.size(), 0)) order.push_back(loops[d]);
    AT_TRY_VOID(sch.Reorder(order));
    loops = order;
  }
  AT_TRY_VOID(sch.Vectorize(loops.back()));
  return {};
}

// copy_operand_cpu's padded input copied once, at the root, before the tiles: in parallel over its
// images and channels, its rows' stores vectorized. Tiles that split only the channels would each
// copy all of it (a 512-channel 7x7 layer in 16 tiles: 16 copies of 166 KB).
Result<void> PlaceCopyOnce(tir::Schedule& sch, tir::StageRV copy) {
  AT_TRY(loops, sch.GetLoops(copy));
  if (loops.size() < 3) return MakeError("a padded input copy has an image, a channel and a spatial loop");
  AT_TRY(outer, sch.Fuse({loops[0], loops[1]}));
  AT_TRY_VOID(sch.Parallel(outer));
  AT_TRY_VOID(sch.Vectorize(loops.back()));
  return {};
}

class RegisterTilingCpu final : public CpuRule {
 public:
  std::string_view Name() const override { return "register_tiling_cpu"; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    using tir::LoopRV;
    AT_TRY(out_loops, sch.GetLoops(ctx.main_stage));
    const int ns = static_cast<int>(out_loops.size());
    const int va = ctx.vector_axis >= 0 && ctx.vector_axis < ns ? ctx.vector_axis : ns - 1;
    AT_TRY(tiles, SpatialTiles(sch, out_loops, va, ctx.decisions));
    std::vector<LoopRV> parallel, outer, registers;
    std::vector<std::vector<tir::IntRV>> tile_rvs;
    for (int a = 0; a < ns; ++a) {
      AT_TRY(t, sch.SamplePerfectTile(out_loops[a], 3, MaxRegisterExtent(a, va), tiles[a]));
      tile_rvs.push_back(t);
      AT_TRY(parts, sch.Split(out_loops[a], std::vector<tir::FactorArg>(t.begin(), t.end())));
      parallel.push_back(parts[0]);
      outer.push_back(parts[1]);
      registers.push_back(parts[2]);
    }
    std::vector<LoopRV> order = parallel;
    order.insert(order.end(), outer.begin(), outer.end());
    order.insert(order.end(), registers.begin(), registers.end());
    AT_TRY_VOID(sch.Reorder(order));
    AT_TRY(fused, FuseIfMany(sch, parallel));
    AT_TRY_VOID(sch.Parallel(fused));
    AT_TRY_VOID(sch.Vectorize(registers.back()));
    int block_axis = 0;
    AT_TRY(block, SampleReduceBlock(sch, ctx, ns, tiles, &block_axis));
    AT_TRY_VOID(block ? PlaceSpanningAccumulator(sch, ctx, fused, va, tile_rvs, block_axis, *block)
                      : PlaceAccumulator(sch, ctx, outer.back(), ns, va));
    const std::vector<tir::IntRV>& vector_tile = tile_rvs[va];
    // Weights packed by the parallel tile's channels (their first index: ChannelOperand), channels last.
    if (ctx.packed_operand) AT_TRY_VOID(sch.PackInput(*ctx.packed_operand, 0, {vector_tile[1], vector_tile[2]}));
    if (ctx.operand_copy) AT_TRY_VOID(PlaceOperandCopy(sch, *ctx.operand_copy, fused, ctx.operand_copy_channels_last));
    if (ctx.input_copy) {
      AT_TRY_VOID(ctx.input_copy_once ? PlaceCopyOnce(sch, *ctx.input_copy) : PlaceOperandCopy(sch, *ctx.input_copy, fused, false));
    }
    ctx.block_loop = fused;
    ctx.tiled = true;
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeRegisterTilingCpuRule() { return std::make_unique<RegisterTilingCpu>(); }

}  // namespace autotune::search
