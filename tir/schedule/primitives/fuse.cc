// fuse: consecutive loops of one stage (outermost first) into one loop.
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<LoopRV> Schedule::Fuse(const std::vector<LoopRV>& loops) {
  if (loops.size() < 2) return MakeError("fuse needs at least two loops");
  int sid = -1;
  std::vector<int> iters;
  for (const auto& l : loops) {
    auto where = Resolve(l);
    if (!where) return where.error();
    if (sid >= 0 && where->first != sid) return MakeError("fuse: loops belong to different stages");
    sid = where->first;
    iters.push_back(where->second);
  }
  Stage& st = state_.stages[sid];
  const int first = st.LeafPosition(iters[0]);
  bool any_reduce = false, any_spatial = false;
  for (size_t i = 0; i < iters.size(); ++i) {
    if (st.LeafPosition(iters[i]) != first + static_cast<int>(i)) {
      return MakeError("fuse: loops must be adjacent and given outermost first");
    }
    (st.iters[iters[i]].is_reduce ? any_reduce : any_spatial) = true;
  }
  if (any_reduce && any_spatial) return MakeError("fuse: cannot fuse a reduction loop with a spatial loop");
  int acc = iters[0];
  for (size_t i = 1; i < iters.size(); ++i) {
    const Iter& a = st.iters[acc];
    const Iter& b = st.iters[iters[i]];
    Iter fused;
    fused.name = a.name + "_" + b.name;
    fused.extent = a.extent * b.extent;
    fused.is_reduce = a.is_reduce;
    fused.var = MakeVar(fused.name);
    int fid = static_cast<int>(st.iters.size());
    st.iters.push_back(fused);
    st.relations.push_back({Relation::Kind::kFuse, fid, acc, iters[i]});
    acc = fid;
  }
  // Stages computed in one of the fused loops are computed in the fused loop.
  for (auto& other : state_.stages) {
    if (other.attach_stage != sid) continue;
    for (int it : iters) {
      if (other.attach_iter == it) other.attach_iter = acc;
    }
  }
  st.leaves.erase(st.leaves.begin() + first, st.leaves.begin() + first + static_cast<int>(iters.size()));
  st.leaves.insert(st.leaves.begin() + first, acc);
  LoopRV out = NewLoopRV(sid, acc);
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& l : loops) inputs.push_back(Sym(l));
  Record("fuse", inputs, nlohmann::json::object(), {LoopSymbol(out.id)});
  return out;
}

InstructionKind FuseInstruction() {
  return {"fuse", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            std::vector<LoopRV> loops;
            for (size_t i = 0; i < inst.inputs.size(); ++i) {
              auto l = replay::LoopAt(inst, i, env);
              if (!l) return l.error();
              loops.push_back(*l);
            }
            auto out = sch.Fuse(loops);
            if (!out) return out.error();
            return replay::BindAll(env.loops, inst, std::vector<LoopRV>{*out});
          }};
}

}  // namespace autotune::tir
