// compute_inline: substitutes an elementwise stage (padding, say) into every consumer, so it is never
// stored.
#include <algorithm>
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::ComputeInline(StageRV stage) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  const int sid = *s;
  const Stage& st = state_.stages[sid];
  if (st.is_output) return MakeError(fmt::format("{} is the output and cannot be inlined", st.name()));
  if (st.op->IsReduction()) return MakeError(fmt::format("{} is a reduction and cannot be inlined", st.name()));
  for (int id : state_.order) {
    const Stage& o = state_.stages[id];
    if (o.attach_stage == sid && (o.attach == AttachKind::kAt || o.attach == AttachKind::kReverseAt)) {
      return MakeError(fmt::format("cannot inline {}: {} is computed in its loops", st.name(), o.name()));
    }
  }
  const te::Operation producer = st.op;
  for (int c : state_.Consumers(sid)) {
    Stage& cs = state_.stages[c];
    auto op = std::make_shared<te::OperationNode>(*cs.op);
    op->body = InlineReads(cs.op->body, *producer);
    cs.op = op;
  }
  state_.order.erase(std::find(state_.order.begin(), state_.order.end(), sid));
  Record("compute_inline", {Sym(stage)}, nlohmann::json::object(), {});
  return {};
}

InstructionKind ComputeInlineInstruction() {
  return {"compute_inline", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            return sch.ComputeInline(*s);
          }};
}

}  // namespace autotune::tir
