#include "search/rules/matrix_rewrite.h"

#include <algorithm>

namespace autotune::search {

Result<tir::MatrixAxes> RewriteAsMatrices(tir::Schedule& sch, SketchRoles& roles) {
  AT_TRY(contraction, sch.GetStage(roles.main));
  AT_TRY(id, sch.Resolve(contraction));
  AT_TRY(axes, tir::FindMatrixAxes(*sch.state().stages[id].op));
  AT_TRY(product, sch.MatrixForm(contraction));
  AT_TRY(pid, sch.Resolve(product));
  if (roles.epilogue.empty()) roles.epilogue = roles.main;
  roles.main = sch.state().stages[pid].name();
  roles.pad.clear();
  return axes;
}

Result<void> FuseOutputAsMatrix(tir::Schedule& sch, tir::StageRV out, const tir::MatrixAxes& axes) {
  AT_TRY(loops, sch.GetLoops(out));
  const auto groups = {&axes.batch, &axes.m, &axes.n};
  std::vector<tir::LoopRV> order;
  for (const std::vector<int>* group : groups) {
    for (int i : *group) {
      if (i >= static_cast<int>(loops.size())) return MakeError("matrix form: the output's loops differ from the product's axes");
      order.push_back(loops[i]);
    }
  }
  if (order.size() != loops.size()) return MakeError("matrix form: the output's loops differ from the product's axes");
  AT_TRY_VOID(sch.Reorder(order));
  size_t at = 0;
  for (const std::vector<int>* group : groups) {
    const std::vector<tir::LoopRV> part(order.begin() + at, order.begin() + at + group->size());
    at += group->size();
    if (part.size() > 1) AT_TRY_VOID(sch.Fuse(part));
  }
  return {};
}

Result<void> InlineAllBut(tir::Schedule& sch, const std::vector<std::string>& keep) {
  for (int id : std::vector<int>(sch.state().order)) {
    const tir::Stage& st = sch.state().stages[id];
    if (st.is_output || std::find(keep.begin(), keep.end(), st.name()) != keep.end()) continue;
    AT_TRY(stage, sch.GetStage(st.name()));
    AT_TRY_VOID(sch.ComputeInline(stage));
  }
  return {};
}

}  // namespace autotune::search
