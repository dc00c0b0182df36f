// Tensor-expression style compute definitions. An operation is a placeholder (kernel input) or a
// compute: out[axis...] = body, where body may be a Reduce over reduce axes. Consumers read an
// operation through BufferLoads of its output buffer.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tir/buffer.h"
#include "tir/expr.h"

namespace autotune::tir::te {

// A loop variable of a compute definition, ranging over [0, extent).
struct IterVar {
  Var var;
  int64_t extent = 0;
};

struct OperationNode {
  std::string name;
  bool is_placeholder = false;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<IterVar> axis;         // one per output dimension (computes only)
  std::vector<IterVar> reduce_axis;  // the axes of the body's Reduce, if any
  Expr body;                         // null for placeholders
  Buffer buffer;                     // the output buffer, global scope

  bool IsReduction() const { return !reduce_axis.empty(); }
};
using Operation = std::shared_ptr<const OperationNode>;

Operation Placeholder(const std::string& name, std::vector<int64_t> shape, DType dtype = DType::kFloat32);

// A reduce axis for use inside a compute body; pass it to Sum/ReduceMax.
IterVar ReduceAxis(int64_t extent, const std::string& name);
Expr Sum(Expr source, const std::vector<IterVar>& axes);
Expr ReduceMax(Expr source, const std::vector<IterVar>& axes);

// out[i0, i1, ...] = fbody(i0, i1, ...). Axis variables are named after `axis_names`.
Operation Compute(const std::string& name, std::vector<int64_t> shape, const std::vector<std::string>& axis_names,
                  const std::function<Expr(const std::vector<Var>&)>& fbody);

// Builds a compute with the given axes and body (used by schedule primitives that rewrite ops).
Operation MakeCompute(const std::string& name, std::vector<IterVar> axis, Expr body, Buffer buffer = nullptr);

// Reads op[indices].
Expr Read(const Operation& op, std::vector<Expr> indices);

// The operations whose buffers `op`'s body reads, in order of first appearance.
std::vector<const BufferNode*> ReadBuffers(const Expr& body);

}  // namespace autotune::tir::te
