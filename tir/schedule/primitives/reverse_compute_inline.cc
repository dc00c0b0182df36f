// reverse_compute_inline: folds an elementwise consumer (an epilogue such as bias + relu) into its
// producer, which then writes the consumer's output directly. The producer must not be a reduction:
// schedule a reduction with cache_write first, and inline the epilogue into the copy-out stage.
#include <algorithm>
#include <fmt/format.h>
#include <unordered_map>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"
#include "tir/transform/substitute.h"

namespace autotune::tir {

Result<void> Schedule::ReverseComputeInline(StageRV stage) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  const int did = *s;
  const Stage& d = state_.stages[did];
  // The one compute stage the consumer reads elementwise.
  int pid = -1;
  for (int p : state_.Producers(did)) {
    if (ReadsElementwise(*d.op, state_.stages[p].op->buffer.get())) {
      if (pid >= 0) return MakeError(fmt::format("{} reads more than one stage elementwise", d.name()));
      pid = p;
    }
  }
  if (pid < 0) return MakeError(fmt::format("{} is not an elementwise consumer of a stage", d.name()));
  if (state_.Producers(did).size() != 1) return MakeError(fmt::format("{} reads other stages too", d.name()));
  Stage& p = state_.stages[pid];
  if (p.op->IsReduction()) {
    return MakeError(fmt::format("cannot inline {} into the reduction {}; cache_write {} first", d.name(), p.name(), p.name()));
  }
  if (state_.Consumers(pid).size() != 1) return MakeError(fmt::format("{} has other consumers", p.name()));
  for (int id : state_.order) {
    const Stage& o = state_.stages[id];
    if (o.attach_stage == did && (o.attach == AttachKind::kAt || o.attach == AttachKind::kReverseAt)) {
      return MakeError(fmt::format("cannot inline {}: {} is computed in its loops", d.name(), o.name()));
    }
  }
  // Rename the consumer's axes to the producer's, then replace the reads by the producer's body.
  std::unordered_map<const VarNode*, Expr> to_producer_axes;
  for (size_t i = 0; i < d.op->axis.size(); ++i) to_producer_axes[d.op->axis[i].var.get()] = p.op->axis[i].var;
  Expr body = InlineReads(Substitute(d.op->body, to_producer_axes), *p.op);
  auto op = te::MakeCompute(d.op->name, p.op->axis, body, d.op->buffer);
  p.op = op;
  p.is_output = d.is_output;
  p.scope = d.scope;
  state_.order.erase(std::find(state_.order.begin(), state_.order.end(), did));
  Record("reverse_compute_inline", {Sym(stage)}, nlohmann::json::object(), {});
  return {};
}

InstructionKind ReverseComputeInlineInstruction() {
  return {"reverse_compute_inline", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            return sch.ReverseComputeInline(*s);
          }};
}

}  // namespace autotune::tir
