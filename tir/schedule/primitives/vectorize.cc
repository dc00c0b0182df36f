// vectorize: marks a spatial loop to run as vector instructions.
#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::Vectorize(LoopRV loop) {
  auto where = Resolve(loop);
  if (!where) return where.error();
  if (auto r = SetLoopKind(state_, where->first, where->second, ForKind::kVectorized, ThreadTag::kNone); !r) return r;
  Record("vectorize", {Sym(loop)}, nlohmann::json::object(), {});
  return {};
}

InstructionKind VectorizeInstruction() {
  return {"vectorize", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto loop = replay::LoopAt(inst, 0, env);
            if (!loop) return loop.error();
            return sch.Vectorize(*loop);
          }};
}

}  // namespace autotune::tir
