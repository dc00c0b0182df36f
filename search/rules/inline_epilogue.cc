// inline_epilogue (cuda): the elementwise epilogue (bias, activation) is applied as the
// accumulators are copied out, so the pre-epilogue result is never written to memory.
#include "search/rules/builtin_rules.h"

namespace autotune::search {
namespace {

class InlineEpilogue final : public ScheduleRule {
 public:
  std::string_view Name() const override { return "inline_epilogue"; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    if (ctx.roles.epilogue.empty()) return {};
    AT_TRY(epilogue, sch.GetStage(ctx.roles.epilogue));
    return sch.ReverseComputeInline(epilogue);
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeInlineEpilogueRule() { return std::make_unique<InlineEpilogue>(); }

}  // namespace autotune::search
