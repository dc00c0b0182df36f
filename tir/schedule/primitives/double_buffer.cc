// double_buffer: asks lowering to give a shared copy a second half and to refill it one iteration of
// its refill loop ahead, so that the loads of the next tile overlap the arithmetic on this one (the
// copies become cp.async on CUDA). The switch may be a sampled integer (0 or 1), so that mutating the
// sample turns it on or off on replay.
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::DoubleBuffer(StageRV stage, FactorArg enable) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  auto on = FactorValue(enable);
  if (!on) return on.error();
  if (*on != 0 && *on != 1) return MakeError("double_buffer takes 0 (off) or 1 (on)");
  Stage& st = state_.stages[*s];
  if (st.scope != Scope::kShared || st.is_output) {
    return MakeError(fmt::format("double_buffer applies to shared copies; {} is not one", st.name()));
  }
  st.double_buffer = *on == 1;
  Record("double_buffer", {Sym(stage), FactorJson(enable)}, nlohmann::json::object(), {});
  return {};
}

InstructionKind DoubleBufferInstruction() {
  return {"double_buffer", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            auto on = replay::FactorAt(inst, 1, env);
            if (!on) return on.error();
            if (std::holds_alternative<std::monostate>(*on)) return MakeError("double_buffer needs 0 or 1");
            return sch.DoubleBuffer(*s, *on);
          }};
}

}  // namespace autotune::tir
