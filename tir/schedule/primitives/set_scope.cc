// set_scope: where an intermediate stage's buffer lives (global, shared or local memory). A row
// reduction computed inside its consumer's row loop keeps its result in a register (local) or shares
// it between the block's threads (shared) instead of writing it to global memory.
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::SetScope(StageRV stage, Scope scope) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  Stage& st = state_.stages[*s];
  if (st.is_output) return MakeError(fmt::format("set_scope: {} is the output, which lives in global memory", st.name()));
  if (scope == Scope::kShared && state_.target != TargetKind::kCuda) {
    return MakeError("set_scope: shared memory is a cuda scope");
  }
  st.scope = scope;
  Record("set_scope", {Sym(stage)}, {{"scope", ScopeName(scope)}}, {});
  return {};
}

InstructionKind SetScopeInstruction() {
  return {"set_scope", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            auto scope = replay::ScopeAttr(inst);
            if (!scope) return scope.error();
            return sch.SetScope(*s, *scope);
          }};
}

}  // namespace autotune::tir
