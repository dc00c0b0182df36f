// FindRowRoles: whether a fresh schedule is a row operator (softmax, layer_norm, rms_norm, norm) and
// which stages are its row reductions.
#include "search/rules/schedule_rule.h"
#include "tir/analysis/expr_uses.h"

namespace autotune::search {
namespace {

using tir::Expr;

bool IsVar(const Expr& e, const tir::Var& v) { return e.get() == v.get(); }

// Every load of the reduction's source reads a whole row, [row vars..., reduce vars...], or a
// value per row, [row vars...]; at least one reads a row.
bool ReducesRows(const tir::te::OperationNode& op) {
  const auto* reduce = tir::As<tir::ReduceNode>(op.body);
  if (!reduce) return false;
  const size_t nr = op.axis.size();
  bool reads_a_row = false;
  for (const tir::BufferLoadNode* load : tir::LoadsIn(reduce->source)) {
    const auto& idx = load->indices;
    const bool per_row = idx.size() == nr, whole_row = idx.size() == nr + op.reduce_axis.size();
    if (!per_row && !whole_row) return false;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (!IsVar(idx[d], d < nr ? op.axis[d].var : op.reduce_axis[d - nr].var)) return false;
    }
    reads_a_row = reads_a_row || whole_row;
  }
  return reads_a_row;
}

}  // namespace

Result<RowRoles> FindRowRoles(const tir::ScheduleState& st) {
  RowRoles roles;
  const int out = st.OutputStage();
  const auto& out_shape = st.stages[out].op->shape;
  for (int id : st.order) {
    const tir::Stage& s = st.stages[id];
    if (id == out) {
      if (s.op->IsReduction()) return MakeError("a row operator's output is elementwise");
      continue;
    }
    if (!s.op->IsReduction()) {
      if (s.op->shape != out_shape) return MakeError("a row operator's elementwise stages have the output's shape");
      (s.is_output ? roles.side_outputs : roles.elementwise).push_back(s.name());
      continue;
    }
    if (!ReducesRows(*s.op)) return MakeError("not a reduction over rows");
    const size_t rank = s.op->shape.size();
    if (!roles.reductions.empty() && rank != roles.row_dims) return MakeError("row reductions of different ranks");
    if (rank > out_shape.size() || !std::equal(s.op->shape.begin(), s.op->shape.end(), out_shape.begin())) {
      return MakeError("a row reduction's axes are the output's leading axes");
    }
    roles.row_dims = rank;
    roles.reductions.push_back(s.name());
  }
  if (roles.reductions.empty()) return MakeError("no row reduction");
  roles.output = st.stages[out].name();
  return roles;
}

}  // namespace autotune::search
