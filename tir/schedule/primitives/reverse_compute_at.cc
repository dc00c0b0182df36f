// reverse_compute_at: computes an elementwise consumer (an epilogue) inside a loop of its producer,
// right after the producer's region of that loop iteration is complete.
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::ReverseComputeAt(StageRV stage, LoopRV loop) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  auto where = Resolve(loop);
  if (!where) return where.error();
  auto [producer, iter] = *where;
  const Stage& st = state_.stages[*s];
  const Stage& p = state_.stages[producer];
  if (producer == *s) return MakeError("reverse_compute_at: a stage cannot be computed in its own loop");
  if (!ReadsElementwise(*st.op, p.op->buffer.get())) {
    return MakeError(fmt::format("reverse_compute_at: {} is not an elementwise consumer of {}", st.name(), p.name()));
  }
  auto consumers = state_.Consumers(producer);
  if (consumers.size() != 1) return MakeError(fmt::format("reverse_compute_at: {} has other consumers", p.name()));
  if (p.iters[iter].is_reduce) {
    return MakeError("reverse_compute_at: the producer's region is complete only outside its reduction loops");
  }
  for (int leaf : p.leaves) {
    if (leaf == iter) break;
    if (p.iters[leaf].is_reduce) {
      return MakeError("reverse_compute_at: the loop is inside a reduction loop of the producer");
    }
  }
  Stage& m = state_.stages[*s];
  m.attach = AttachKind::kReverseAt;
  m.attach_stage = producer;
  m.attach_iter = iter;
  Record("reverse_compute_at", {Sym(stage), Sym(loop)}, nlohmann::json::object(), {});
  return {};
}

InstructionKind ReverseComputeAtInstruction() {
  return {"reverse_compute_at", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            auto l = replay::LoopAt(inst, 1, env);
            if (!l) return l.error();
            return sch.ReverseComputeAt(*s, *l);
          }};
}

}  // namespace autotune::tir
