// parallel: marks a spatial loop to run its iterations on CPU threads.
#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::Parallel(LoopRV loop) {
  auto where = Resolve(loop);
  if (!where) return where.error();
  if (auto r = SetLoopKind(state_, where->first, where->second, ForKind::kParallel, ThreadTag::kNone); !r) return r;
  Record("parallel", {Sym(loop)}, nlohmann::json::object(), {});
  return {};
}

InstructionKind ParallelInstruction() {
  return {"parallel", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto loop = replay::LoopAt(inst, 0, env);
            if (!loop) return loop.error();
            return sch.Parallel(*loop);
          }};
}

}  // namespace autotune::tir
