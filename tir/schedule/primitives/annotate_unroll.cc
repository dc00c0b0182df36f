// annotate_unroll: Ansor's auto_unroll_max_step pragma on a loop: lowering unrolls every loop nest
// inside it whose total number of steps is at most max_step. The step may be a sampled integer, so
// that mutating the sample changes the pragma on replay.
#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::AnnotateUnroll(LoopRV loop, FactorArg max_step) {
  auto where = Resolve(loop);
  if (!where) return where.error();
  auto step = FactorValue(max_step);
  if (!step) return step.error();
  if (*step < 0 || *step > 4096) return MakeError("auto_unroll_max_step must be in [0, 4096]");
  state_.stages[where->first].iters[where->second].auto_unroll_max_step = *step;
  Record("annotate_unroll", {Sym(loop), FactorJson(max_step)}, nlohmann::json::object(), {});
  return {};
}

InstructionKind AnnotateUnrollInstruction() {
  return {"annotate_unroll", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto loop = replay::LoopAt(inst, 0, env);
            if (!loop) return loop.error();
            auto step = replay::FactorAt(inst, 1, env);
            if (!step) return step.error();
            if (std::holds_alternative<std::monostate>(*step)) return MakeError("annotate_unroll needs a step");
            return sch.AnnotateUnroll(*loop, *step);
          }};
}

}  // namespace autotune::tir
