// register_tiling_cpu: the output tile kept in vector registers across the whole reduction. The
// spatial loops of the stage that writes the accumulators out are tiled at three levels [parallel,
// outer, register]; the parallel level is fused and runs in parallel; the accumulator (cache_write
// _local) is computed at the last outer loop, so its loops are the reduction loops around the
// register tile, whose innermost loop is vectorized. The C compiler unrolls the tile's other loops
// and keeps the tile in registers: a gemm 512^3 kernel so made ran at 324 GFLOP/s on 2 AVX-512
// cores against 74 for the same tile accumulated in the output (docs/BENCHMARKS.md, "CPU"). The
// operand copy of copy_operand_cpu, where there is one, is computed per parallel tile.
#include <fmt/format.h>

#include <optional>

#include "search/rules/builtin_rules.h"
#include "search/rules/joint_tiles.h"
#include "search/rules/rule_util.h"
#include "tir/schedule/perfect_tile.h"

namespace autotune::search {
namespace {

// Elements of the register tile: 24 of the 32 AVX-512 registers of 16 float32 lanes (the others hold
// the operands); on AVX2's 16 registers of 8 lanes a tile this large spills, and the search learns so.
constexpr int64_t kMaxRegisterTile = 24 * 16;
// The register tile's extent on the innermost (vectorized) axis, and on each other axis (unrolled).
constexpr int64_t kMaxVectorExtent = 64, kMaxUnrolledExtent = 8;
// The vectorized extent a sample aims at: whole vectors of 8 lanes where the axis allows.
constexpr int64_t kLanes = 8;
constexpr int kJointDraws = 256;

// The register tile's largest extent on axis `a` of `ns`.
int64_t MaxRegisterExtent(int a, int ns) { return a == ns - 1 ? kMaxVectorExtent : kMaxUnrolledExtent; }

int64_t RegisterElements(const std::vector<std::vector<int64_t>>& tiles) {
  int64_t elements = 1;
  for (const auto& t : tiles) elements *= t.back();
  return elements;
}

bool FitsRegisters(const std::vector<std::vector<int64_t>>& tiles, const std::vector<int64_t>& extents) {
  const int64_t vector = tiles.back().back();
  return RegisterElements(tiles) <= kMaxRegisterTile && (vector % kLanes == 0 || extents.back() % kLanes != 0);
}

// Tiles [parallel, outer, register] of every spatial axis: the decider's where it decides; the others
// drawn together (redrawn up to kJointDraws times) until the register tile fits (FitsRegisters).
Result<std::vector<std::vector<int64_t>>> SpatialTiles(tir::Schedule& sch, const std::vector<tir::LoopRV>& loops,
                                                       const SketchDecisions& d) {
  const int ns = static_cast<int>(loops.size());
  JointTiling j{{}, {}, 3, {}};
  for (int a = 0; a < ns; ++a) {
    AT_TRY(extent, LoopExtent(sch, loops[a]));
    j.extents.push_back(extent);
    j.max_innermost.push_back(MaxRegisterExtent(a, ns));
    j.decided.push_back(d.tiles(TileRequest{false, a, ns, extent, 3, MaxRegisterExtent(a, ns)}));
  }
  AxisTiles last;
  auto fits = [&](const AxisTiles& t) { return FitsRegisters(t, j.extents); };
  if (auto tiles = DrawJointTiles(sch.rng(), j, kJointDraws, fits, {}, &last)) return *tiles;
  return MakeError(fmt::format("no register tile of at most {} elements drawn (last: {})", kMaxRegisterTile,
                               RegisterElements(last)));
}

class RegisterTilingCpu final : public CpuRule {
 public:
  std::string_view Name() const override { return "register_tiling_cpu"; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    using tir::LoopRV;
    AT_TRY(out_loops, sch.GetLoops(ctx.main_stage));
    const int ns = static_cast<int>(out_loops.size());
    AT_TRY(tiles, SpatialTiles(sch, out_loops, ctx.decisions));
    std::vector<LoopRV> parallel, outer, registers;
    for (int a = 0; a < ns; ++a) {
      AT_TRY(t, sch.SamplePerfectTile(out_loops[a], 3, MaxRegisterExtent(a, ns), tiles[a]));
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
    // The accumulator: its reduction loops around its register tile, the tile's last loop vectorized.
    AT_TRY_VOID(sch.ComputeAt(ctx.accumulator, outer.back()));
    AT_TRY(acc_loops, sch.GetLoops(ctx.accumulator));
    std::vector<LoopRV> acc_order(acc_loops.begin() + ns, acc_loops.end());
    acc_order.insert(acc_order.end(), acc_loops.begin(), acc_loops.begin() + ns);
    AT_TRY_VOID(sch.Reorder(acc_order));
    AT_TRY_VOID(sch.Vectorize(acc_loops[ns - 1]));
    if (ctx.operand_copy) {  // copy_operand_cpu's copy, per parallel tile
      AT_TRY_VOID(sch.ComputeAt(*ctx.operand_copy, fused));
      AT_TRY(copy_loops, sch.GetLoops(*ctx.operand_copy));
      AT_TRY_VOID(sch.Vectorize(copy_loops.back()));
    }
    ctx.block_loop = fused;
    ctx.tiled = true;
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeRegisterTilingCpuRule() { return std::make_unique<RegisterTilingCpu>(); }

}  // namespace autotune::search
