// inline_padding: the padding stage is folded into its reader (the shared copy on cuda, the
// reduction on cpu), so no padded tensor is ever written; so is the im2col matrix (after im2col),
// into its shared copy.
#include "search/rules/builtin_rules.h"

namespace autotune::search {
namespace {

class InlinePadding final : public ScheduleRule {
 public:
  std::string_view Name() const override { return "inline_padding"; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    for (const std::string* name : {&ctx.roles.pad, &ctx.roles.reindexed}) {
      if (name->empty()) continue;
      AT_TRY(stage, sch.GetStage(*name));
      AT_TRY_VOID(sch.ComputeInline(stage));
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeInlinePaddingRule() { return std::make_unique<InlinePadding>(); }

}  // namespace autotune::search
