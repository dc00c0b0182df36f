// cache_write_local: the tiled stage accumulates in registers; the stage itself becomes the copy of
// the accumulators to its output buffer.
#include "search/rules/builtin_rules.h"

namespace autotune::search {
namespace {

class CacheWriteLocal final : public ScheduleRule {
 public:
  std::string_view Name() const override { return "cache_write_local"; }
  std::vector<std::string_view> Marks() const override { return {"cache_write"}; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    AT_TRY(stage, sch.GetStage(ctx.roles.main));
    AT_TRY(local, sch.CacheWrite(stage, tir::Scope::kLocal));
    ctx.main_stage = stage;
    ctx.accumulator = local;
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeCacheWriteLocalRule() { return std::make_unique<CacheWriteLocal>(); }

}  // namespace autotune::search
