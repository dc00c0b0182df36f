// split_k (cuda): for small outputs with long reductions. The outermost reduction axis is split in
// `count` parts (sampled) and rfactor-ed: the partial-sums stage gets the parts as one more spatial
// axis and becomes the stage the later rules tile; the original stage sums the partials
// (combine_partials schedules it).
#include <fmt/format.h>

#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"

namespace autotune::search {
namespace {

// Outputs up to 1 Mi elements: at the 16-64 outputs per thread of a good register tile that is at
// most 64 Ki threads, a quarter of one wave of a large GPU (132 SMs x 2048 threads on an H200), so
// the plain tiling must choose between idle SMs and small register tiles (on the H200 the BERT
// projections, 393 Ki outputs, went from 0.84x to 1.07x of cuBLAS with split-K in the space, and
// ResNet's batch-16 7x7x512 layer, 392 Ki outputs, from 0.69x to 1.28x of cuDNN).
constexpr int64_t kMaxOutputs = 1024 * 1024;
// Reductions shorter than this are cheap to finish in one thread: nothing to gain from partials.
constexpr int64_t kMinReduction = 256;
constexpr int64_t kMaxParts = 64;

// Part counts: the divisors of the outermost reduction extent in [2, kMaxParts].
std::vector<int64_t> PartCounts(int64_t extent) {
  std::vector<int64_t> out;
  for (int64_t d = 2; d <= std::min(extent, kMaxParts); ++d) {
    if (extent % d == 0) out.push_back(d);
  }
  return out;
}

class SplitK final : public ScheduleRule {
 public:
  std::string_view Name() const override { return "split_k"; }
  std::vector<std::string_view> Marks() const override { return {"rfactor"}; }
  bool AppliesTo(const tir::Schedule& fresh, const SketchRoles& roles) const override {
    if (fresh.target() != tir::TargetKind::kCuda) return false;
    const int id = fresh.state().FindStage(roles.main);
    if (id < 0) return false;
    const StageShape e = ShapeOf(fresh.state().stages[id]);
    return e.outputs <= kMaxOutputs && e.reduction >= kMinReduction && !PartCounts(e.first_reduce).empty();
  }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    AT_TRY(stage, sch.GetStage(ctx.roles.main));
    AT_TRY(sid, sch.Resolve(stage));
    const size_t ns = sch.state().stages[sid].op->axis.size();
    AT_TRY(loops, sch.GetLoops(stage));
    if (loops.size() <= ns) return MakeError("split_k needs a reduction loop");
    AT_TRY(extent, LoopExtent(sch, loops[ns]));
    const std::vector<int64_t> counts = PartCounts(extent);
    if (counts.empty()) return MakeError(fmt::format("split_k: {} has no divisor in [2, {}]", extent, kMaxParts));
    AT_TRY(count, SampleChoice(sch, counts, ctx.decisions.split_k));
    AT_TRY(parts, sch.Split(loops[ns], {count, std::monostate{}}));
    AT_TRY(partials, sch.RFactor(stage, parts[0]));
    AT_TRY(pid, sch.Resolve(partials));
    ctx.roles.combine = ctx.roles.main;
    ctx.roles.main = sch.state().stages[pid].name();
    ctx.block_only_axes = 1;  // the parts
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeSplitKRule() { return std::make_unique<SplitK>(); }

}  // namespace autotune::search
