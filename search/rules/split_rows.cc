// split_rows (cuda.rows_split, before rows_gpu): for a few long rows with one sum over each (norm,
// rms_norm), where one block a row would leave most of the GPU idle. The row's outermost reduction
// axis is split in `parts` (sampled) and rfactor-ed: a first kernel sums each part of each row across
// the threads of its own block into a global workspace; rows_gpu then schedules the row operator on
// the partial sums (its reduction now over the parts) as the second kernel.
#include <fmt/format.h>

#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"

namespace autotune::search {
namespace {

// Rows at least this long and at most this many of them: fewer rows than two blocks for each
// multiprocessor of a large GPU (132 on an H100 or H200), each long enough to split.
constexpr int64_t kMinRowLength = 4096;
constexpr int64_t kMaxRows = 256;

std::vector<int64_t> RowPartCounts(int64_t extent) {
  std::vector<int64_t> out;
  for (int64_t p = 2; p <= 256 && p <= extent; p *= 2) out.push_back(p);
  return out;
}

class SplitRows final : public ScheduleRule {
 public:
  std::string_view Name() const override { return "split_rows"; }
  std::vector<std::string_view> Marks() const override { return {"rfactor"}; }
  bool AppliesTo(const tir::Schedule& fresh, const SketchRoles&) const override {
    if (fresh.target() != tir::TargetKind::kCuda) return false;
    auto roles = FindRowRoles(fresh.state());
    // A side output is written by the row's threads and read back by them: not split across blocks.
    if (!roles || roles->reductions.size() != 1 || !roles->side_outputs.empty()) return false;
    const tir::Stage& st = fresh.state().stages[fresh.state().FindStage(roles->reductions[0])];
    const auto* reduce = tir::As<tir::ReduceNode>(st.op->body);
    const StageShape shape = ShapeOf(st);
    return reduce->combiner == tir::ReduceOp::kSum && shape.reduction >= kMinRowLength && shape.outputs <= kMaxRows &&
           !RowPartCounts(shape.first_reduce).empty();
  }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    AT_TRY(roles, FindRowRoles(sch.state()));
    if (roles.reductions.size() != 1) return MakeError("split_rows needs one row reduction");
    AT_TRY(stage, sch.GetStage(roles.reductions[0]));
    AT_TRY(loops, sch.GetLoops(stage));
    const auto first_reduce = loops.begin() + static_cast<std::ptrdiff_t>(roles.row_dims);
    AT_TRY(extent, LoopExtent(sch, *first_reduce));
    const std::vector<int64_t> counts = RowPartCounts(extent);
    if (counts.empty()) return MakeError(fmt::format("split_rows: a reduction axis of {} has no parts", extent));
    AT_TRY(count, SampleChoice(sch, counts, ctx.decisions.split_k));
    AT_TRY(parts, sch.Split(*first_reduce, {count, std::monostate{}}));
    AT_TRY(partials, sch.RFactor(stage, parts[0]));
    // The partial sums' kernel: one block for each part of each row, the part summed across its threads.
    AT_TRY(pl, sch.GetLoops(partials));
    const auto reduce_begin = pl.begin() + 1 + static_cast<std::ptrdiff_t>(roles.row_dims);
    AT_TRY(blocks, FuseIfMany(sch, std::vector<tir::LoopRV>(pl.begin(), reduce_begin)));
    AT_TRY_VOID(sch.Bind(blocks, tir::ThreadTag::kBlockIdxX));
    AT_TRY(threads, SampleChoice(sch, {64, 128, 256, 512}, ctx.decisions.combine_threads));
    AT_TRY_VOID(ReduceAcrossThreads(sch, partials, 1, threads));  // after the one fused block loop
    ctx.rows = roles;  // rows_gpu schedules the rest: the reduction now sums the parts
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeSplitRowsRule() { return std::make_unique<SplitRows>(); }

}  // namespace autotune::search
