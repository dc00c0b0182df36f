// multi_level_tiling_cpu: SSRSRS tiling of the reduction. Spatial loops at four levels [parallel,
// outer, register block, vector (at most 64)], reduction loops at two; the outermost spatial tiles
// are fused and run in parallel, the innermost spatial loop is vectorized.
#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"

namespace autotune::search {
namespace {

constexpr int64_t kMaxVectorLoop = 64;

class MultiLevelTilingCpu final : public CpuRule {
 public:
  std::string_view Name() const override { return "multi_level_tiling_cpu"; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    using tir::LoopRV;
    AT_TRY(stage, sch.GetStage(ctx.roles.main));
    ctx.main_stage = stage;
    AT_TRY(loops, sch.GetLoops(stage));
    const int n = static_cast<int>(loops.size());
    AT_TRY(sid, sch.Resolve(stage));
    const int ns = static_cast<int>(sch.state().stages[sid].op->axis.size());
    const int nr = n - ns;
    std::vector<LoopRV> s0, s1, s2, s3, r0, r1;
    for (int a = 0; a < n; ++a) {
      const bool reduce = a >= ns;
      AT_TRY(extent, LoopExtent(sch, loops[a]));
      TileRequest req{reduce, reduce ? a - ns : a, reduce ? nr : ns, extent, reduce ? 2 : 4,
                      reduce ? 0 : kMaxVectorLoop};
      AT_TRY(t, sch.SamplePerfectTile(loops[a], req.levels, req.max_innermost, ctx.decisions.tiles(req)));
      AT_TRY(parts, sch.Split(loops[a], std::vector<tir::FactorArg>(t.begin(), t.end())));
      if (reduce) {
        r0.push_back(parts[0]);
        r1.push_back(parts[1]);
      } else {
        s0.push_back(parts[0]);
        s1.push_back(parts[1]);
        s2.push_back(parts[2]);
        s3.push_back(parts[3]);
      }
    }
    std::vector<LoopRV> order = s0;
    for (auto* group : {&s1, &r0, &s2, &r1, &s3}) order.insert(order.end(), group->begin(), group->end());
    AT_TRY_VOID(sch.Reorder(order));
    AT_TRY(outer, FuseIfMany(sch, s0));
    AT_TRY_VOID(sch.Parallel(outer));
    AT_TRY_VOID(sch.Vectorize(s3.back()));
    ctx.block_loop = outer;
    ctx.tiled = true;
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeMultiLevelTilingCpuRule() { return std::make_unique<MultiLevelTilingCpu>(); }

}  // namespace autotune::search
