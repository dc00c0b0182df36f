// pipeline / double_buffer: ask lowering to give a shared copy several slots and to refill them
// stages - 1 iterations of its refill loop ahead, so that the loads of later tiles overlap the
// arithmetic on this one (the copies become cp.async on CUDA). `pipeline(stage, n)` takes 1 (off) to
// 4 slots; `double_buffer(stage, on)` is pipeline with 2 slots or off, kept for the traces that name
// it. The count may be a sampled integer, so that mutating the sample changes it on replay.
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {
namespace {

Result<void> MarkPipelined(ScheduleState& state, int stage, int64_t stages, std::string_view primitive) {
  Stage& st = state.stages[stage];
  if (st.scope != Scope::kShared || st.is_output) {
    return MakeError(fmt::format("{} applies to shared copies; {} is not one", primitive, st.name()));
  }
  st.pipeline_stages = stages;
  return {};
}

}  // namespace

Result<void> Schedule::DoubleBuffer(StageRV stage, FactorArg enable) {
  AT_TRY(s, Resolve(stage));
  AT_TRY(on, FactorValue(enable));
  if (on != 0 && on != 1) return MakeError("double_buffer takes 0 (off) or 1 (on)");
  AT_TRY_VOID(MarkPipelined(state_, s, on == 1 ? 2 : 1, "double_buffer"));
  Record("double_buffer", {Sym(stage), FactorJson(enable)}, nlohmann::json::object(), {});
  return {};
}

Result<void> Schedule::Pipeline(StageRV stage, FactorArg stages) {
  AT_TRY(s, Resolve(stage));
  AT_TRY(n, FactorValue(stages));
  if (n < 1 || n > Schedule::kMaxPipelineStages) {
    return MakeError(fmt::format("pipeline takes 1 (off) to {} stages, not {}", Schedule::kMaxPipelineStages, n));
  }
  AT_TRY_VOID(MarkPipelined(state_, s, n, "pipeline"));
  Record("pipeline", {Sym(stage), FactorJson(stages)}, nlohmann::json::object(), {});
  return {};
}

InstructionKind DoubleBufferInstruction() {
  return {"double_buffer", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            AT_TRY(s, replay::StageAt(inst, 0, env));
            AT_TRY(on, replay::FactorAt(inst, 1, env));
            if (std::holds_alternative<std::monostate>(on)) return MakeError("double_buffer needs 0 or 1");
            return sch.DoubleBuffer(s, on);
          }};
}

InstructionKind PipelineInstruction() {
  return {"pipeline", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            AT_TRY(s, replay::StageAt(inst, 0, env));
            AT_TRY(n, replay::FactorAt(inst, 1, env));
            if (std::holds_alternative<std::monostate>(n)) return MakeError("pipeline needs a stage count");
            return sch.Pipeline(s, n);
          }};
}

}  // namespace autotune::tir
