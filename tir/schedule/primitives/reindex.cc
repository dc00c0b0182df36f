// reindex: a new elementwise stage holds what a consumer reads of a producer (a compute stage or a
// kernel input), indexed by the consumer's own iterators instead of the producer's coordinates; the
// consumer then reads the new stage at those iterators. For a convolution reading
// pad[n, c, p + r, q + s] this is the im2col matrix col[c, r, s, n, p, q]: a shared copy of it is
// laid out as a gemm's B tile (reduction rows, output pixels along a row), where a copy of the
// producer itself holds the sliding window's box. The new stage's axes are the iterators the access
// uses, reduction iterators first, so that the copy's rows are reduction steps and the pixels a
// thread reads at one step lie side by side. It is meant to be inlined into its copy (never stored).
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "tir/analysis/expr_uses.h"
#include "tir/functor.h"
#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"
#include "tir/structural_equal.h"
#include "tir/transform/substitute.h"

namespace autotune::tir {

namespace {

// Loads of `from` become loads of `to` at `indices` (every load of `from` is the same access).
class ReindexedLoadReplacer : public IRMutator {
 public:
  ReindexedLoadReplacer(const BufferNode* from, Buffer to, std::vector<Expr> indices)
      : from_(from), to_(std::move(to)), indices_(std::move(indices)) {}
  Expr Mutate_(const BufferLoadNode* op, const Expr& self) override {
    if (op->buffer.get() != from_) return MutateFields(op, self);
    return Load(to_, indices_);
  }

 private:
  const BufferNode* from_;
  Buffer to_;
  std::vector<Expr> indices_;
};

}  // namespace

Result<StageRV> Schedule::ReIndex(StageRV consumer, const std::string& read) {
  auto c = Resolve(consumer);
  if (!c) return c.error();
  const int cid = *c;
  te::Operation source;
  for (int id : state_.order) {
    if (state_.stages[id].name() == read) source = state_.stages[id].op;
  }
  for (const auto& in : state_.inputs) {
    if (in->name == read) source = in;
  }
  if (!source) return MakeError(fmt::format("reindex: no stage or kernel input named '{}'", read));
  const te::OperationNode& cop = *state_.stages[cid].op;
  std::vector<const BufferLoadNode*> loads = LoadsIn(cop.body);
  std::erase_if(loads, [&](const BufferLoadNode* l) { return l->buffer != source->buffer; });
  if (loads.empty()) return MakeError(fmt::format("reindex: {} does not read {}", cop.name, read));
  for (const BufferLoadNode* l : loads) {
    for (size_t d = 0; d < l->indices.size(); ++d) {
      if (!ExprDeepEqual(l->indices[d], loads[0]->indices[d])) {
        return MakeError(fmt::format("reindex: {} reads {} at more than one index", cop.name, read));
      }
    }
  }
  const std::vector<Expr>& access = loads[0]->indices;
  std::vector<const VarNode*> used;
  for (const Expr& e : access) {
    for (const VarNode* v : VarsIn(e)) {
      if (std::find(used.begin(), used.end(), v) == used.end()) used.push_back(v);
    }
  }
  // The consumer's iterators the access uses: reduction ones first, each group in the consumer's order.
  std::vector<const te::IterVar*> iters;
  for (const auto* group : {&cop.reduce_axis, &cop.axis}) {
    for (const te::IterVar& iv : *group) {
      if (std::find(used.begin(), used.end(), iv.var.get()) != used.end()) iters.push_back(&iv);
    }
  }
  if (iters.size() != used.size()) {
    return MakeError(fmt::format("reindex: {}'s index into {} uses a variable that is not its iterator", cop.name, read));
  }
  std::vector<te::IterVar> axis;
  std::unordered_map<const VarNode*, Expr> to_new;
  std::vector<Expr> consumer_index;
  for (const te::IterVar* iv : iters) {
    axis.push_back(te::IterVar{MakeVar(iv->var->name), iv->extent});
    to_new[iv->var.get()] = axis.back().var;
    consumer_index.push_back(iv->var);
  }
  std::vector<Expr> index;
  for (const Expr& e : access) index.push_back(Substitute(e, to_new));
  auto op = te::MakeCompute(UniqueStageName(state_, fmt::format("{}_reindex", read)), std::move(axis),
                            te::Read(source, index));
  const int sid = state_.AddStage(op, cid);
  Stage& cs = state_.stages[cid];
  auto rewritten = std::make_shared<te::OperationNode>(*cs.op);
  rewritten->body = ReindexedLoadReplacer(source->buffer.get(), op->buffer, consumer_index).Mutate(cs.op->body);
  cs.op = rewritten;
  StageRV out = NewStageRV(sid);
  Record("reindex", {Sym(consumer)}, {{"read", read}}, {StageSymbol(out.id)});
  return out;
}

InstructionKind ReIndexInstruction() {
  return {"reindex", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto consumer = replay::StageAt(inst, 0, env);
            if (!consumer) return consumer.error();
            auto read = replay::Attr<std::string>(inst, "read");
            if (!read) return read.error();
            auto out = sch.ReIndex(*consumer, *read);
            if (!out) return out.error();
            return replay::BindAll(env.stages, inst, std::vector<StageRV>{*out});
          }};
}

}  // namespace autotune::tir
