// rfactor: splits a reduction in two. For a reduction loop L of stage S (a reduce axis, or one part
// of a split reduce axis), a new stage S_rf computes partial results with L turned into a spatial
// axis (so it can run in parallel, e.g. split-K), and S sums the partials over L.
#include <fmt/format.h>

#include <unordered_map>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"
#include "tir/transform/substitute.h"

namespace autotune::tir {

Result<StageRV> Schedule::RFactor(StageRV stage, LoopRV loop) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  auto where = Resolve(loop);
  if (!where) return where.error();
  const int sid = *s;
  if (where->first != sid) return MakeError("rfactor: the loop belongs to another stage");
  const Stage& st = state_.stages[sid];
  const int L = where->second;
  const auto* reduce = As<ReduceNode>(st.op->body);
  if (!reduce || !st.iters[L].is_reduce) return MakeError("rfactor needs a reduction loop");
  if (reduce->combiner != ReduceOp::kSum) return MakeError("rfactor supports sum reductions");
  for (int id : state_.order) {
    const Stage& o = state_.stages[id];
    if (o.attach_stage == sid && (o.attach == AttachKind::kAt || o.attach == AttachKind::kReverseAt)) {
      return MakeError(fmt::format("rfactor: {} is computed in the loops of {}", o.name(), st.name()));
    }
  }
  // Find the root reduce iter behind L: L itself, or a two-way split of it.
  int root = -1, other = -1;
  bool l_is_outer = false;
  if (st.relations.empty()) {
    root = L;
  } else if (st.relations.size() == 1 && st.relations[0].kind == Relation::Kind::kSplit &&
             (st.relations[0].outer == L || st.relations[0].inner == L)) {
    root = st.relations[0].parent;
    l_is_outer = st.relations[0].outer == L;
    other = l_is_outer ? st.relations[0].inner : st.relations[0].outer;
  } else {
    return MakeError("rfactor: the stage's loops may only have one split of the reduction axis");
  }
  const int root_pos = static_cast<int>(std::find(st.root.begin(), st.root.end(), root) - st.root.begin()) -
                       static_cast<int>(st.op->axis.size());
  const Var root_var = reduce->axis[root_pos];
  const int64_t root_extent = st.iters[root].extent;

  // Partial stage: axes [rf, original axes...], reductions: the other reduce axes (+ the other part).
  Var rf_var = MakeVar(st.iters[L].name);
  std::vector<te::IterVar> rf_axis = {{rf_var, st.iters[L].extent}};
  for (const auto& a : st.op->axis) rf_axis.push_back(a);
  std::vector<Var> red_vars;
  std::vector<Expr> red_extents;
  Expr root_value = rf_var;
  if (other >= 0) {
    Var other_var = MakeVar(st.iters[other].name);
    red_vars.push_back(other_var);
    red_extents.push_back(IntImm(st.iters[other].extent));
    const int64_t inner_extent = st.iters[l_is_outer ? other : L].extent;
    root_value = l_is_outer ? Add(Mul(rf_var, IntImm(inner_extent)), other_var)
                            : Add(Mul(other_var, IntImm(inner_extent)), rf_var);
  }
  for (size_t i = 0; i < reduce->axis.size(); ++i) {
    if (static_cast<int>(i) == root_pos) continue;
    red_vars.push_back(reduce->axis[i]);
    red_extents.push_back(reduce->extents[i]);
  }
  Expr source = Substitute(reduce->source, std::unordered_map<const VarNode*, Expr>{{root_var.get(), root_value}});
  const int64_t covered = other >= 0 ? st.iters[L].extent * st.iters[other].extent : root_extent;
  if (covered > root_extent) {
    source = Select(LT(root_value, IntImm(root_extent)), source, ReduceIdentity(ReduceOp::kSum, source->dtype));
  }
  Expr rf_body = red_vars.empty() ? source : Reduce(ReduceOp::kSum, source, red_vars, red_extents);
  auto rf_op = te::MakeCompute(st.name() + "_rf", rf_axis, rf_body);

  // The original stage now sums the partials.
  auto k = te::ReduceAxis(st.iters[L].extent, st.iters[L].name);
  std::vector<Expr> idx = {k.var};
  for (const auto& a : st.op->axis) idx.push_back(a.var);
  auto final_op = te::MakeCompute(st.name(), st.op->axis, te::Sum(te::Read(rf_op, idx), {k}), st.op->buffer);

  const int rf_id = state_.AddStage(rf_op, sid);
  Stage& s2 = state_.stages[sid];
  s2.op = final_op;
  InitStageIters(s2);
  StageRV out = NewStageRV(rf_id);
  Record("rfactor", {Sym(stage), Sym(loop)}, nlohmann::json::object(), {StageSymbol(out.id)});
  return out;
}

InstructionKind RFactorInstruction() {
  return {"rfactor", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            auto l = replay::LoopAt(inst, 1, env);
            if (!l) return l.error();
            auto out = sch.RFactor(*s, *l);
            if (!out) return out.error();
            return replay::BindAll(env.stages, inst, std::vector<StageRV>{*out});
          }};
}

}  // namespace autotune::tir
