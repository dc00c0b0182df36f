// rows_gpu (cuda.rows): a row operator in one kernel. Each block takes `rows` rows (threadIdx.y)
// with `threads` threads per row (threadIdx.x). Every reduction over a row is computed for the block's
// rows across its threads (each thread a strided share, combined through shared memory) into a
// register; the elementwise stages are inlined into the output, whose row the same threads write
// with consecutive threads on consecutive elements (coalesced). A side output (add_rms_norm's sum)
// is written by the same threads at the row, element for element as they later read it.
#include <algorithm>

#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"

namespace autotune::search {
namespace {

constexpr int64_t kMaxThreads = 1024;

std::vector<int64_t> ThreadCounts(int64_t row_length) {
  std::vector<int64_t> out;
  for (int64_t t = 32; t <= kMaxThreads; t *= 2) {
    if (out.empty() || t / 2 < row_length) out.push_back(t);
  }
  return out;
}

std::vector<int64_t> RowsPerBlock(int64_t rows) {
  std::vector<int64_t> out = {1};
  for (int64_t r = 2; r <= 32 && r <= rows; r *= 2) out.push_back(r);
  return out;
}

class RowsGpu final : public ScheduleRule {
 public:
  std::string_view Name() const override { return "rows_gpu"; }
  std::vector<std::string_view> Marks() const override { return {"set_scope"}; }
  bool AppliesTo(const tir::Schedule& fresh, const SketchRoles&) const override {
    return fresh.target() == tir::TargetKind::kCuda && FindRowRoles(fresh.state()).ok();
  }
  // (After split_rows the roles are the context's: the reduction reads the partial sums, not rows.)
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    AT_TRY(roles, ctx.rows ? Result<RowRoles>(*ctx.rows) : FindRowRoles(sch.state()));
    const tir::Stage& first = sch.state().stages[sch.state().FindStage(roles.reductions[0])];
    const StageShape row = ShapeOf(first);
    const StageShape out_shape = ShapeOf(sch.state().stages[sch.state().FindStage(roles.output)]);
    const int64_t cols = out_shape.outputs / row.outputs;
    AT_TRY(threads, SampleChoice(sch, ThreadCounts(std::max(row.reduction, cols)), ctx.decisions.row_threads));
    AT_TRY(thread_count, sch.Resolve(threads));
    std::vector<int64_t> row_counts = RowsPerBlock(row.outputs);
    while (row_counts.size() > 1 && row_counts.back() * thread_count > kMaxThreads) row_counts.pop_back();
    AT_TRY(rows, SampleChoice(sch, row_counts, ctx.decisions.rows_per_block));

    AT_TRY(out, InlineAndFuseRows(sch, roles.elementwise, roles.output, roles.row_dims));
    AT_TRY(row_parts, sch.Split(out.rows, {std::monostate{}, rows}));
    AT_TRY_VOID(sch.Bind(row_parts[0], tir::ThreadTag::kBlockIdxX));
    AT_TRY_VOID(sch.Bind(row_parts[1], tir::ThreadTag::kThreadIdxY));
    if (out.cols) {
      AT_TRY(col_parts, sch.Split(*out.cols, {std::monostate{}, threads}));
      AT_TRY_VOID(sch.Bind(col_parts[1], tir::ThreadTag::kThreadIdxX));
    }
    // The last first: a reduction read by a later one is computed at the loop after it (compute_at).
    for (auto name = roles.reductions.rbegin(); name != roles.reductions.rend(); ++name) {
      AT_TRY(stage, sch.GetStage(*name));
      AT_TRY_VOID(sch.SetScope(stage, tir::Scope::kLocal));
      AT_TRY_VOID(sch.ComputeAt(stage, row_parts[1]));
      AT_TRY_VOID(ReduceAcrossThreads(sch, stage, roles.row_dims, threads));
    }
    AT_TRY(side_cols, SideOutputsAtRow(sch, roles.side_outputs, roles.row_dims, row_parts[1]));
    for (const tir::LoopRV& cols : side_cols) {
      AT_TRY(parts, sch.Split(cols, {std::monostate{}, threads}));
      AT_TRY_VOID(sch.Bind(parts[1], tir::ThreadTag::kThreadIdxX));
    }
    AT_TRY(depth, SampleChoice(sch, {0, 16, 64, 512}, ctx.decisions.unroll));
    AT_TRY_VOID(sch.AnnotateUnroll(row_parts[0], depth));
    ctx.block_loop = row_parts[0];
    ctx.tiled = true;
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeRowsGpuRule() { return std::make_unique<RowsGpu>(); }

}  // namespace autotune::search
