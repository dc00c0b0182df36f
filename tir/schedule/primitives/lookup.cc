// get_stage / get_loops: the lookups every trace starts with. The methods live in schedule.cc.
#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

InstructionKind GetStageInstruction() {
  return {"get_stage", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto name = replay::Attr<std::string>(inst, "name");
            if (!name) return name.error();
            auto rv = sch.GetStage(*name);
            if (!rv) return rv.error();
            return replay::BindAll(env.stages, inst, std::vector<StageRV>{*rv});
          }};
}

InstructionKind GetLoopsInstruction() {
  return {"get_loops", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            auto loops = sch.GetLoops(*s);
            if (!loops) return loops.error();
            return replay::BindAll(env.loops, inst, *loops);
          }};
}

}  // namespace autotune::tir
