// reorder: puts the given loops of one stage in the given order, in the positions they occupy.
#include <fmt/format.h>

#include <algorithm>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::Reorder(const std::vector<LoopRV>& order) {
  if (order.empty()) return MakeError("reorder needs loops");
  int sid = -1;
  std::vector<int> iters;
  for (const auto& l : order) {
    auto where = Resolve(l);
    if (!where) return where.error();
    if (sid >= 0 && where->first != sid) return MakeError("reorder: loops belong to different stages");
    sid = where->first;
    if (std::find(iters.begin(), iters.end(), where->second) != iters.end()) {
      return MakeError("reorder: a loop is given twice");
    }
    iters.push_back(where->second);
  }
  Stage& st = state_.stages[sid];
  std::vector<int> positions;
  for (int it : iters) positions.push_back(st.LeafPosition(it));
  std::sort(positions.begin(), positions.end());
  for (size_t i = 0; i < positions.size(); ++i) st.leaves[positions[i]] = iters[i];
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& l : order) inputs.push_back(Sym(l));
  Record("reorder", inputs, nlohmann::json::object(), {});
  return {};
}

InstructionKind ReorderInstruction() {
  return {"reorder", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            std::vector<LoopRV> loops;
            for (size_t i = 0; i < inst.inputs.size(); ++i) {
              auto l = replay::LoopAt(inst, i, env);
              if (!l) return l.error();
              loops.push_back(*l);
            }
            return sch.Reorder(loops);
          }};
}

}  // namespace autotune::tir
