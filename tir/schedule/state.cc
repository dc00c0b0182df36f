#include "tir/schedule/state.h"

#include <algorithm>

#include "support/check.h"
#include "tir/functor.h"

namespace autotune::tir {

namespace {

class BufferReplacer : public IRMutator {
 public:
  BufferReplacer(const BufferNode* from, Buffer to) : from_(from), to_(std::move(to)) {}
  Buffer MutateBuffer(const Buffer& b) override { return b.get() == from_ ? to_ : b; }

 private:
  const BufferNode* from_;
  Buffer to_;
};

bool Reads(const te::OperationNode& op, const BufferNode* b) {
  if (op.is_placeholder) return false;
  for (const BufferNode* r : te::ReadBuffers(op.body)) {
    if (r == b) return true;
  }
  return false;
}

}  // namespace

bool Stage::IsLeaf(int iter) const { return LeafPosition(iter) >= 0; }

int Stage::LeafPosition(int iter) const {
  auto it = std::find(leaves.begin(), leaves.end(), iter);
  return it == leaves.end() ? -1 : static_cast<int>(it - leaves.begin());
}

void InitStageIters(Stage& stage) {
  stage.iters.clear();
  stage.root.clear();
  stage.leaves.clear();
  stage.relations.clear();
  auto add = [&](const te::IterVar& iv, bool reduce) {
    Iter it;
    it.name = iv.var->name;
    it.extent = iv.extent;
    it.is_reduce = reduce;
    it.var = MakeVar(iv.var->name);
    stage.root.push_back(static_cast<int>(stage.iters.size()));
    stage.iters.push_back(std::move(it));
  };
  for (const auto& a : stage.op->axis) add(a, false);
  for (const auto& a : stage.op->reduce_axis) add(a, true);
  stage.leaves = stage.root;
}

ScheduleState ScheduleState::Make(const te::ComputeDAG& dag, Target target) {
  ScheduleState s;
  s.target = target;
  s.inputs = dag.inputs;
  for (const auto& op : dag.ops) {
    if (op->is_placeholder) continue;
    int id = s.AddStage(op, -1);
    s.stages[id].is_output = op == dag.output || dag.IsSideOutput(op);
  }
  return s;
}

int ScheduleState::AddStage(const te::Operation& op, int before) {
  Stage st;
  st.op = op;
  InitStageIters(st);
  int id = static_cast<int>(stages.size());
  stages.push_back(std::move(st));
  auto pos = before < 0 ? order.end() : std::find(order.begin(), order.end(), before);
  order.insert(pos, id);
  return id;
}

int ScheduleState::FindStage(const std::string& name) const {
  for (int id : order) {
    if (stages[id].name() == name) return id;
  }
  return -1;
}

int ScheduleState::OutputStage() const {
  for (auto id = order.rbegin(); id != order.rend(); ++id) {
    if (stages[*id].is_output) return *id;
  }
  AUTOTUNE_CHECK(false, "schedule has no output stage");
  return -1;
}

bool ScheduleState::IsLive(int stage) const {
  return stage >= 0 && stage < static_cast<int>(stages.size()) &&
         std::find(order.begin(), order.end(), stage) != order.end();
}

std::vector<int> ScheduleState::Consumers(int stage) const {
  std::vector<int> out;
  const BufferNode* b = stages[stage].op->buffer.get();
  for (int id : order) {
    if (id != stage && Reads(*stages[id].op, b)) out.push_back(id);
  }
  return out;
}

std::vector<int> ScheduleState::Producers(int stage) const {
  std::vector<int> out;
  for (int id : order) {
    if (id != stage && Reads(*stages[stage].op, stages[id].op->buffer.get())) out.push_back(id);
  }
  return out;
}

void ScheduleState::RedirectReads(const std::vector<int>& readers, const Buffer& from, const Buffer& to) {
  BufferReplacer r(from.get(), to);
  RewriteBodies(readers, r);
}

void ScheduleState::RewriteBodies(const std::vector<int>& readers, IRMutator& m) {
  for (int id : readers) {
    Stage& st = stages[id];
    if (st.op->is_placeholder) continue;
    Expr body = m.Mutate(st.op->body);
    if (body == st.op->body) continue;
    auto op = std::make_shared<te::OperationNode>(*st.op);
    op->body = body;
    st.op = op;
  }
}

}  // namespace autotune::tir
