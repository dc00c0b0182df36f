// pad_einsum: a reduction computes over its iteration domain rounded up to multiples (MetaSchedule's
// pad_einsum), so that tiles of a fixed shape (a tensor intrinsic's) cover it. Each input or stage it
// reads at its iterators is read through a new stage that holds it padded with zeros (meant to be
// inlined into its copies); the reduction's buffer grows, and its consumers read it where they did,
// so the padding is computed but never read. Only a fresh stage (no loop transformed, computed at
// the root) can be padded, and every read must index each dimension by one iterator.
#include <fmt/format.h>

#include <unordered_map>

#include "tir/analysis/expr_uses.h"
#include "tir/functor.h"
#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"
#include "tir/structural_equal.h"

namespace autotune::tir {

namespace {

// The padded extent of each iterator of `op`, by variable.
std::unordered_map<const VarNode*, std::pair<int64_t, int64_t>> PaddedIterators(const te::OperationNode& op,
                                                                                const std::vector<int64_t>& multiples) {
  std::unordered_map<const VarNode*, std::pair<int64_t, int64_t>> out;  // var -> (extent, padded extent)
  size_t i = 0;
  for (const auto* group : {&op.axis, &op.reduce_axis}) {
    for (const te::IterVar& iv : *group) {
      const int64_t m = multiples[i++];
      out[iv.var.get()] = {iv.extent, (iv.extent + m - 1) / m * m};
    }
  }
  return out;
}

// A stage holding `source` padded with zeros to `shape`.
te::Operation PaddedCopy(const te::Operation& source, const std::vector<int64_t>& shape, const std::string& name) {
  std::vector<te::IterVar> axis;
  std::vector<Expr> index;
  Expr inside;
  for (size_t d = 0; d < shape.size(); ++d) {
    axis.push_back(te::IterVar{MakeVar(fmt::format("ax{}", d)), shape[d]});
    index.push_back(axis.back().var);
    if (shape[d] == source->shape[d]) continue;
    Expr in = LT(axis.back().var, IntImm(source->shape[d]));
    inside = inside ? And(inside, in) : in;
  }
  return te::MakeCompute(name, std::move(axis), Select(inside, te::Read(source, index), ZeroOf(source->dtype)));
}

class LoadRedirect : public IRMutator {
 public:
  explicit LoadRedirect(std::unordered_map<const BufferNode*, Buffer> to) : to_(std::move(to)) {}
  Expr Mutate_(const BufferLoadNode* op, const Expr& self) override {
    auto it = to_.find(op->buffer.get());
    if (it == to_.end()) return MutateFields(op, self);
    return Load(it->second, op->indices);
  }

 private:
  std::unordered_map<const BufferNode*, Buffer> to_;
};

}  // namespace

Result<void> Schedule::PadEinsum(StageRV stage, const std::vector<int64_t>& multiples) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  const int sid = *s;
  const Stage& st = state_.stages[sid];
  const te::OperationNode& op = *st.op;
  if (!op.IsReduction() || st.is_output || st.attach != AttachKind::kRoot || !st.relations.empty()) {
    return MakeError(fmt::format("pad_einsum: {} must be a fresh reduction that is not the output", st.name()));
  }
  if (multiples.size() != op.axis.size() + op.reduce_axis.size()) {
    return MakeError(fmt::format("pad_einsum: {} has {} iterators, {} multiples were given", st.name(),
                                 op.axis.size() + op.reduce_axis.size(), multiples.size()));
  }
  for (int64_t m : multiples) {
    if (m < 1 || m > 4096) return MakeError("pad_einsum: multiples must be in [1, 4096]");
  }
  const auto padded = PaddedIterators(op, multiples);
  // The reads to pad: each dimension indexed by one iterator; a padded iterator pads that dimension.
  std::unordered_map<const BufferNode*, Buffer> redirect;
  std::vector<te::Operation> copies;
  for (const BufferLoadNode* load : LoadsIn(op.body)) {
    if (redirect.count(load->buffer.get())) continue;
    te::Operation source;
    for (const auto& in : state_.inputs) source = in->buffer == load->buffer ? in : source;
    for (int id : state_.order) source = state_.stages[id].op->buffer == load->buffer ? state_.stages[id].op : source;
    std::vector<int64_t> shape = source->shape;
    bool grows = false;
    for (size_t d = 0; d < load->indices.size(); ++d) {
      const auto* v = As<VarNode>(load->indices[d]);
      auto it = v ? padded.find(v) : padded.end();
      if (it == padded.end()) return MakeError(fmt::format("pad_einsum: {} reads {} at an index that is not one of its iterators", st.name(), source->name));
      if (it->second.first != source->shape[d]) return MakeError(fmt::format("pad_einsum: {} reads part of {}", st.name(), source->name));
      shape[d] = it->second.second;
      grows |= shape[d] != source->shape[d];
    }
    if (!grows) continue;
    copies.push_back(PaddedCopy(source, shape, UniqueStageName(state_, source->name + "_pad")));
    redirect[load->buffer.get()] = copies.back()->buffer;
  }
  // The reduction over the padded domain: its axes' and its Reduce's extents, reading the copies.
  std::vector<te::IterVar> axis = op.axis;
  for (auto& iv : axis) iv.extent = padded.at(iv.var.get()).second;
  Expr body = LoadRedirect(redirect).Mutate(op.body);
  const auto* r = As<ReduceNode>(body);
  std::vector<Expr> extents;
  for (const Var& v : r->axis) extents.push_back(IntImm(padded.at(v.get()).second));
  body = Reduce(r->combiner, r->source, r->axis, extents);
  te::Operation grown = te::MakeCompute(op.name, std::move(axis), body);
  const std::vector<int> readers = state_.Consumers(sid);
  const Buffer old_buffer = op.buffer;
  for (const auto& c : copies) state_.AddStage(c, sid);
  Stage& target = state_.stages[sid];
  target.op = grown;
  InitStageIters(target);
  state_.RedirectReads(readers, old_buffer, grown->buffer);
  Record("pad_einsum", {Sym(stage)}, {{"multiples", multiples}}, {});
  return {};
}

InstructionKind PadEinsumInstruction() {
  return {"pad_einsum", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            auto multiples = replay::Attr<std::vector<int64_t>>(inst, "multiples");
            if (!multiples) return multiples.error();
            return sch.PadEinsum(*s, *multiples);
          }};
}

}  // namespace autotune::tir
