// compute_at: computes a producer stage inside a loop of its consumer, so that each iteration of
// the loop computes just the region of the producer it needs (found by bound inference).
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

namespace {
// True when `stage` is (transitively) attached inside a loop of `ancestor`.
bool IsAttachedUnder(const ScheduleState& state, int stage, int ancestor) {
  for (int s = stage, guard = 0; s >= 0 && guard < 1000; ++guard) {
    const Stage& st = state.stages[s];
    if (st.attach != AttachKind::kAt && st.attach != AttachKind::kReverseAt) return false;
    if (st.attach_stage == ancestor) return true;
    s = st.attach_stage;
  }
  return false;
}
}  // namespace

Result<void> Schedule::ComputeAt(StageRV stage, LoopRV loop) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  auto where = Resolve(loop);
  if (!where) return where.error();
  auto [target, iter] = *where;
  const Stage& st = state_.stages[*s];
  if (*s == state_.OutputStage()) {
    return MakeError(fmt::format("{} is the output and cannot be computed at another stage", st.name()));
  }
  if (target == *s) return MakeError("compute_at: a stage cannot be computed in its own loop");
  const auto consumers = state_.Consumers(*s);
  bool read_by_target = false;
  for (int c : consumers) {
    const bool inside = ComputedInside(state_, c, target, iter);
    read_by_target = read_by_target || c == target || inside;
    if (c != target && !inside && !ComputedAlongside(state_, c, *s, target, iter)) {
      return MakeError(fmt::format("compute_at: {} must be read by {} alone, by stages computed at the same loop "
                                   "that read it at their own axes, or by stages computed inside that loop",
                                   st.name(), state_.stages[target].name()));
    }
  }
  if (!read_by_target) {
    return MakeError(fmt::format("compute_at: {} is not read by {}", st.name(), state_.stages[target].name()));
  }
  if (IsAttachedUnder(state_, target, *s)) return MakeError("compute_at would make a cycle of attachments");
  Stage& m = state_.stages[*s];
  m.attach = AttachKind::kAt;
  m.attach_stage = target;
  m.attach_iter = iter;
  Record("compute_at", {Sym(stage), Sym(loop)}, nlohmann::json::object(), {});
  return {};
}

Result<void> Schedule::ComputeRoot(StageRV stage) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  Stage& m = state_.stages[*s];
  m.attach = AttachKind::kRoot;
  m.attach_stage = m.attach_iter = -1;
  Record("compute_root", {Sym(stage)}, nlohmann::json::object(), {});
  return {};
}

InstructionKind ComputeAtInstruction() {
  return {"compute_at", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            auto l = replay::LoopAt(inst, 1, env);
            if (!l) return l.error();
            return sch.ComputeAt(*s, *l);
          }};
}

InstructionKind ComputeRootInstruction() {
  return {"compute_root", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            return sch.ComputeRoot(*s);
          }};
}

}  // namespace autotune::tir
