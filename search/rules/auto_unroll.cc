// auto_unroll: an unroll pragma on the tiled stage's outermost loop; code generation unrolls the
// loops below it whose total trip count is at most the sampled depth (0: none).
#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"

namespace autotune::search {
namespace {

class AutoUnroll final : public ScheduleRule {
 public:
  std::string_view Name() const override { return "auto_unroll"; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    if (!ctx.tiled) return MakeError("auto_unroll needs multi-level tiling first");
    const std::vector<int64_t> depths = sch.target() == tir::TargetKind::kCuda
                                            ? std::vector<int64_t>{0, 16, 64, 512, 1024}
                                            : std::vector<int64_t>{0, 16, 64, 512};
    AT_TRY(depth, SampleChoice(sch, depths, ctx.decisions.unroll));
    return sch.AnnotateUnroll(ctx.block_loop, depth);
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeAutoUnrollRule() { return std::make_unique<AutoUnroll>(); }

}  // namespace autotune::search
