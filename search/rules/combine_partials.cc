// combine_partials (cuda, after split_k): the stage that sums the partials runs as its own kernel,
// one output element per thread (threads per block sampled), the sum in a register and the epilogue
// applied as it is written.
#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"

namespace autotune::search {
namespace {

class CombinePartials final : public CudaRule {
 public:
  std::string_view Name() const override { return "combine_partials"; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    if (ctx.roles.combine.empty()) return MakeError("combine_partials needs split_k first");
    AT_TRY(combine, sch.GetStage(ctx.roles.combine));
    AT_TRY(sum, sch.CacheWrite(combine, tir::Scope::kLocal));
    if (!ctx.roles.epilogue.empty()) {
      AT_TRY(epilogue, sch.GetStage(ctx.roles.epilogue));
      AT_TRY_VOID(sch.ReverseComputeInline(epilogue));
    }
    AT_TRY(loops, sch.GetLoops(combine));
    AT_TRY(fused, FuseIfMany(sch, loops));
    AT_TRY(threads, SampleChoice(sch, {64, 128, 256, 512}, ctx.decisions.combine_threads));
    AT_TRY(parts, sch.Split(fused, {std::monostate{}, threads}));
    AT_TRY_VOID(sch.Bind(parts[0], tir::ThreadTag::kBlockIdxX));
    AT_TRY_VOID(sch.Bind(parts[1], tir::ThreadTag::kThreadIdxX));
    return sch.ComputeAt(sum, parts[1]);
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeCombinePartialsRule() { return std::make_unique<CombinePartials>(); }

}  // namespace autotune::search
