// sample_compute_location: draws one of the candidate loops (uniformly) as the place to compute a
// stage at; the decision is the index of the candidate. The output is a new handle to the chosen
// loop, which a following compute_at uses, so replaying with another decision moves the stage.
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<LoopRV> Schedule::SampleComputeLocation(const std::vector<LoopRV>& candidates, std::optional<int64_t> decision) {
  if (candidates.empty()) return MakeError("sample_compute_location needs candidate loops");
  std::vector<std::pair<int, int>> where;
  nlohmann::json inputs = nlohmann::json::array();
  for (const LoopRV& l : candidates) {
    auto w = Resolve(l);
    if (!w) return w.error();
    where.push_back(*w);
    inputs.push_back(Sym(l));
  }
  const auto n = static_cast<int64_t>(candidates.size());
  const int64_t index = decision ? *decision : rng_.UniformInt(0, n - 1);
  if (index < 0 || index >= n) return MakeError(fmt::format("decision {} is not a candidate index", index));
  LoopRV out = NewLoopRV(where[index].first, where[index].second);
  Record("sample_compute_location", std::move(inputs), nlohmann::json::object(), {LoopSymbol(out.id)}, index);
  return out;
}

InstructionKind SampleComputeLocationInstruction() {
  return {"sample_compute_location", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            std::vector<LoopRV> candidates;
            for (size_t i = 0; i < inst.inputs.size(); ++i) {
              auto l = replay::LoopAt(inst, i, env);
              if (!l) return l.error();
              candidates.push_back(*l);
            }
            auto decision = replay::IntDecision(inst);
            if (!decision) return decision.error();
            auto out = sch.SampleComputeLocation(candidates, *decision);
            if (!out) return out.error();
            return replay::BindAll(env.loops, inst, std::vector<LoopRV>{*out});
          }};
}

}  // namespace autotune::tir
