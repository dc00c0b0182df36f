// cache_write: the stage's computation moves into a new stage writing a buffer of the given scope
// (local registers on GPUs, a cache-resident tile on CPUs); the original stage becomes a copy from
// it, which is where fused epilogues are inlined. Apply it before transforming the stage's loops.
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<StageRV> Schedule::CacheWrite(StageRV stage, Scope scope) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  const int sid = *s;
  Stage& st = state_.stages[sid];
  if (!st.relations.empty()) return MakeError(fmt::format("cache_write of {} must come before its loops are transformed", st.name()));
  for (int id : state_.order) {
    if (state_.stages[id].attach_stage == sid && state_.stages[id].attach != AttachKind::kRoot) {
      return MakeError(fmt::format("cache_write of {}: other stages are computed in its loops", st.name()));
    }
  }
  std::string name = fmt::format("{}_{}", st.name(), ScopeName(scope));
  for (const auto& other : state_.stages) {
    if (other.name() == name) return MakeError(fmt::format("stage {} already has a {} cache", st.name(), ScopeName(scope)));
  }
  const te::Operation original = st.op;
  std::vector<te::IterVar> axis;
  for (const auto& a : original->axis) axis.push_back(te::IterVar{MakeVar(a.var->name), a.extent});
  // The cache computes the original body over the same axes.
  auto cache = te::MakeCompute(name, original->axis, original->body);
  std::vector<Expr> idx;
  for (const auto& a : axis) idx.push_back(a.var);
  auto copy = te::MakeCompute(original->name, axis, te::Read(cache, idx), original->buffer);
  const bool was_output = st.is_output;
  const Scope old_scope = st.scope;
  st.op = copy;
  InitStageIters(st);
  int cid = state_.AddStage(cache, sid);
  state_.stages[cid].scope = scope;
  state_.stages[sid].is_output = was_output;
  state_.stages[sid].scope = old_scope;
  StageRV out = NewStageRV(cid);
  Record("cache_write", {Sym(stage)}, {{"scope", ScopeName(scope)}}, {StageSymbol(out.id)});
  return out;
}

InstructionKind CacheWriteInstruction() {
  return {"cache_write", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            auto scope = replay::ScopeAttr(inst);
            if (!scope) return scope.error();
            auto out = sch.CacheWrite(*s, *scope);
            if (!out) return out.error();
            return replay::BindAll(env.stages, inst, std::vector<StageRV>{*out});
          }};
}

}  // namespace autotune::tir
