#include "tir/te/compute_dag.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "support/check.h"

namespace autotune::tir::te {

ComputeDAG ComputeDAG::Make(const std::vector<Operation>& inputs, const std::vector<Operation>& computes,
                            const std::vector<Operation>& side_outputs) {
  AUTOTUNE_CHECK(!computes.empty(), "a compute DAG needs an output");
  const Operation& output = computes.back();
  std::unordered_map<const BufferNode*, Operation> by_buffer;
  for (const auto& in : inputs) by_buffer[in->buffer.get()] = in;
  ComputeDAG dag;
  dag.inputs = inputs;
  dag.output = output;
  dag.side_outputs = side_outputs;
  enum Mark { kUnseen, kVisiting, kDone };
  std::unordered_map<const OperationNode*, Mark> state;
  std::function<void(const Operation&)> visit = [&](const Operation& op) {
    Mark& s = state[op.get()];
    AUTOTUNE_CHECK(s != kVisiting, "compute definition has a cycle");
    if (s == kDone) return;
    s = kVisiting;
    if (!op->is_placeholder) {
      for (const BufferNode* b : ReadBuffers(op->body)) {
        auto it = by_buffer.find(b);
        AUTOTUNE_CHECK(it != by_buffer.end(), "compute reads a buffer that is no known operation");
        visit(it->second);
      }
    }
    s = kDone;
    dag.ops.push_back(op);
  };
  for (const auto& c : computes) by_buffer[c->buffer.get()] = c;
  visit(output);
  for (const auto& side : side_outputs) {
    AUTOTUNE_CHECK(side != output && state[side.get()] == kDone && !side->is_placeholder,
                   "a side output is a compute the output reads");
  }
  return dag;
}

bool ComputeDAG::IsSideOutput(const Operation& op) const {
  return std::find(side_outputs.begin(), side_outputs.end(), op) != side_outputs.end();
}

}  // namespace autotune::tir::te
