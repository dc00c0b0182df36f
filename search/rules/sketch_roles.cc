// FindSketchRoles: which stage of a fresh schedule is the reduction, its padding and its epilogue.
#include "search/rules/schedule_rule.h"

namespace autotune::search {

Result<SketchRoles> FindSketchRoles(const tir::ScheduleState& st) {
  int main = -1, pad = -1, epilogue = -1;
  for (int id : st.order) {
    if (st.stages[id].op->IsReduction()) {
      if (main >= 0) return MakeError("the sketches expect one reduction");
      main = id;
    }
  }
  if (main < 0) return MakeError("the sketches expect a reduction");
  for (int p : st.Producers(main)) {
    if (pad >= 0) return MakeError("the sketches expect at most one producer stage");
    pad = p;
  }
  const int out = st.OutputStage();
  if (out != main) epilogue = out;
  SketchRoles roles;
  roles.main = st.stages[main].name();
  if (pad >= 0) roles.pad = st.stages[pad].name();
  if (epilogue >= 0) roles.epilogue = st.stages[epilogue].name();
  return roles;
}

}  // namespace autotune::search
