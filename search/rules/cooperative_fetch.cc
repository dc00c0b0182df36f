// cooperative_fetch (cuda): each shared copy is refilled at one of the outer reduction loops (a
// sampled compute location; by default the innermost of them) by all the block's threads together,
// each loading `width` consecutive elements per step (1, 2 or 4: float2 and float4 loads where
// aligned). A sampled switch double-buffers all the copies: each is refilled one iteration ahead into
// a second half with asynchronous copies (cp.async), overlapping the loads with the arithmetic.
#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"

namespace autotune::search {
namespace {

class CooperativeFetch final : public CudaRule {
 public:
  std::string_view Name() const override { return "cooperative_fetch"; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    if (!ctx.tiled) return MakeError("cooperative_fetch needs multi-level tiling first");
    if (ctx.shared.empty()) return {};
    AT_TRY(pipelined, SampleChoice(sch, {0, 1}, ctx.decisions.double_buffer));
    for (const auto& copy : ctx.shared) {
      AT_TRY_VOID(sch.DoubleBuffer(copy, pipelined));
      // At one of the outer reduction loops: further out, a larger copy refilled less often.
      AT_TRY(at, sch.SampleComputeLocation(ctx.reduce_outer_loops,
                                           ctx.decisions.compute_location(ctx.reduce_outer_loops.size())));
      AT_TRY_VOID(sch.ComputeAt(copy, at));
      AT_TRY(loops, sch.GetLoops(copy));
      AT_TRY(fused, FuseIfMany(sch, loops));
      AT_TRY(width, SampleChoice(sch, {1, 2, 4}, ctx.decisions.vector));
      std::vector<tir::FactorArg> factors = {std::monostate{}};
      for (const auto& f : ctx.thread_factors) factors.push_back(f);
      factors.push_back(width);
      AT_TRY(parts, sch.Split(fused, factors));
      AT_TRY(t, FuseIfMany(sch, std::vector<tir::LoopRV>(parts.begin() + 1, parts.end() - 1)));
      AT_TRY_VOID(sch.Bind(t, tir::ThreadTag::kThreadIdxX));
      AT_TRY_VOID(sch.Vectorize(parts.back()));
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeCooperativeFetchRule() { return std::make_unique<CooperativeFetch>(); }

}  // namespace autotune::search
