// unroll: marks a loop to be unrolled completely.
#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::Unroll(LoopRV loop) {
  auto where = Resolve(loop);
  if (!where) return where.error();
  if (auto r = SetLoopKind(state_, where->first, where->second, ForKind::kUnrolled, ThreadTag::kNone); !r) return r;
  Record("unroll", {Sym(loop)}, nlohmann::json::object(), {});
  return {};
}

InstructionKind UnrollInstruction() {
  return {"unroll", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto loop = replay::LoopAt(inst, 0, env);
            if (!loop) return loop.error();
            return sch.Unroll(*loop);
          }};
}

}  // namespace autotune::tir
