// rows_cpu (cpu.rows): a row operator with its rows in parallel. Every reduction over a row is
// computed into a register at the row's loop, its loop vectorized (one accumulator per lane, combined
// at the end); the elementwise stages are inlined into the output, whose row loop is vectorized
// (split by a sampled vector width), as is a side output's (add_rms_norm's sum), computed at the row.
#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"

namespace autotune::search {
namespace {

class RowsCpu final : public ScheduleRule {
 public:
  std::string_view Name() const override { return "rows_cpu"; }
  std::vector<std::string_view> Marks() const override { return {"set_scope"}; }
  bool AppliesTo(const tir::Schedule& fresh, const SketchRoles&) const override {
    return fresh.target() == tir::TargetKind::kCpu && FindRowRoles(fresh.state()).ok();
  }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    AT_TRY(roles, FindRowRoles(sch.state()));
    AT_TRY(out, InlineAndFuseRows(sch, roles.elementwise, roles.output, roles.row_dims));
    const tir::LoopRV row_loop = out.rows;
    AT_TRY_VOID(sch.Parallel(row_loop));
    std::optional<tir::IntRV> width;
    if (out.cols) {
      AT_TRY(w, SampleChoice(sch, {1, 4, 8, 16}, ctx.decisions.vector));
      width = w;
      AT_TRY(col_parts, sch.Split(*out.cols, {std::monostate{}, w}));
      AT_TRY_VOID(sch.Vectorize(col_parts[1]));
    }
    // The last first: a reduction read by a later one is computed at the loop after it (compute_at).
    for (auto name = roles.reductions.rbegin(); name != roles.reductions.rend(); ++name) {
      AT_TRY(stage, sch.GetStage(*name));
      AT_TRY_VOID(sch.SetScope(stage, tir::Scope::kLocal));
      AT_TRY_VOID(sch.ComputeAt(stage, row_loop));
      AT_TRY(red_loops, sch.GetLoops(stage));
      const auto reduce_begin = red_loops.begin() + static_cast<std::ptrdiff_t>(roles.row_dims);
      AT_TRY(reduce, FuseIfMany(sch, std::vector<tir::LoopRV>(reduce_begin, red_loops.end())));
      AT_TRY_VOID(sch.Vectorize(reduce));
    }
    AT_TRY(side_cols, SideOutputsAtRow(sch, roles.side_outputs, roles.row_dims, row_loop));
    for (const tir::LoopRV& cols : side_cols) {
      if (!width) break;  // one element a row: nothing to vectorize
      AT_TRY(parts, sch.Split(cols, {std::monostate{}, *width}));
      AT_TRY_VOID(sch.Vectorize(parts[1]));
    }
    AT_TRY(depth, SampleChoice(sch, {0, 16, 64}, ctx.decisions.unroll));
    AT_TRY_VOID(sch.AnnotateUnroll(row_loop, depth));
    ctx.block_loop = row_loop;
    ctx.tiled = true;
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeRowsCpuRule() { return std::make_unique<RowsCpu>(); }

}  // namespace autotune::search
