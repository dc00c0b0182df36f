// sample_categorical: draws one of the candidate integers with the given probabilities (unroll
// depth, vector width, ...). The decision is the index of the candidate.
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<IntRV> Schedule::SampleCategorical(const std::vector<int64_t>& candidates, const std::vector<double>& probs,
                                          std::optional<int64_t> decision) {
  if (candidates.empty()) return MakeError("sample_categorical needs candidates");
  if (probs.size() != candidates.size()) return MakeError("sample_categorical needs one probability per candidate");
  int64_t index = decision ? *decision : rng_.Categorical(probs);
  if (index < 0 || index >= static_cast<int64_t>(candidates.size())) {
    return MakeError(fmt::format("decision {} is not a candidate index", index));
  }
  IntRV out = NewIntRV(candidates[index]);
  Record("sample_categorical", nlohmann::json::array(), {{"candidates", candidates}, {"probs", probs}},
         {IntSymbol(out.id)}, index);
  return out;
}

InstructionKind SampleCategoricalInstruction() {
  return {"sample_categorical", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto candidates = replay::Attr<std::vector<int64_t>>(inst, "candidates");
            auto probs = replay::Attr<std::vector<double>>(inst, "probs");
            if (!candidates) return candidates.error();
            if (!probs) return probs.error();
            auto decision = replay::IntDecision(inst);
            if (!decision) return decision.error();
            auto out = sch.SampleCategorical(*candidates, *probs, *decision);
            if (!out) return out.error();
            return replay::BindAll(env.ints, inst, std::vector<IntRV>{*out});
          }};
}

}  // namespace autotune::tir
