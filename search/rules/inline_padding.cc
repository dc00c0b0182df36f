// inline_padding: the padding stage is folded into its reader (the shared copy on cuda, the
// reduction on cpu), so no padded tensor is ever written.
#include "search/rules/builtin_rules.h"

namespace autotune::search {
namespace {

class InlinePadding final : public ScheduleRule {
 public:
  std::string_view Name() const override { return "inline_padding"; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    if (ctx.roles.pad.empty()) return {};
    AT_TRY(pad, sch.GetStage(ctx.roles.pad));
    return sch.ComputeInline(pad);
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeInlinePaddingRule() { return std::make_unique<InlinePadding>(); }

}  // namespace autotune::search
