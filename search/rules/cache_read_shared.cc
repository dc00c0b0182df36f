// cache_read_shared (cuda): every buffer the accumulator reads gets a shared-memory copy, which the
// block's threads fill together (cooperative_fetch places and spreads the copies). The padding stage
// and the im2col matrix are copied as stages (inline_padding then folds them into the copy).
#include "search/rules/builtin_rules.h"
#include "tir/te/compute_dag.h"

namespace autotune::search {
namespace {

class CacheReadShared final : public CudaRule {
 public:
  std::string_view Name() const override { return "cache_read_shared"; }
  // Only this rule copies: a cuda trace without one is cuda.direct's.
  std::vector<std::string_view> Marks() const override { return {"cache_read"}; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    AT_TRY(acc, sch.Resolve(ctx.accumulator));
    for (const tir::BufferNode* b : tir::te::ReadBuffers(sch.state().stages[acc].op->body)) {
      if (b->name == ctx.roles.pad || b->name == ctx.roles.reindexed) {
        AT_TRY(producer, sch.GetStage(b->name));
        AT_TRY(copy, sch.CacheRead(producer, tir::Scope::kShared, {ctx.accumulator}));
        ctx.shared.push_back(copy);
      } else {
        AT_TRY(copy, sch.CacheReadInput(b->name, tir::Scope::kShared, {ctx.accumulator}));
        ctx.shared.push_back(copy);
      }
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeCacheReadSharedRule() { return std::make_unique<CacheReadShared>(); }

}  // namespace autotune::search
