// epilogue_at_outer_tile (cpu): the epilogue runs per parallel outer tile, right after the tile is
// computed (while it is in cache), vectorized on its innermost loop.
#include "search/rules/builtin_rules.h"

namespace autotune::search {
namespace {

class EpilogueAtOuterTile final : public CpuRule {
 public:
  std::string_view Name() const override { return "epilogue_at_outer_tile"; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    if (ctx.roles.epilogue.empty()) return {};
    if (!ctx.tiled) return MakeError("epilogue_at_outer_tile needs multi-level tiling first");
    AT_TRY(epilogue, sch.GetStage(ctx.roles.epilogue));
    AT_TRY_VOID(sch.ReverseComputeAt(epilogue, ctx.block_loop));
    AT_TRY(loops, sch.GetLoops(epilogue));
    return sch.Vectorize(loops.back());
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeEpilogueAtOuterTileRule() { return std::make_unique<EpilogueAtOuterTile>(); }

}  // namespace autotune::search
