// A buffer: a named multi-dimensional array with a dtype and a memory scope. Identity is the node.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tir/expr.h"

namespace autotune::tir {

enum class Scope : uint8_t { kGlobal, kShared, kLocal };
const char* ScopeName(Scope s);
std::optional<Scope> ParseScope(std::string_view name);

// The row stride storage_align(factor, offset) gives a row of `stride` elements: the smallest one at
// least that long that is offset more than a multiple of factor.
inline int64_t AlignedStride(int64_t stride, int64_t factor, int64_t offset) {
  return (stride + factor - 1 - offset) / factor * factor + offset;
}

struct BufferNode {
  std::string name;
  DType dtype;
  std::vector<Expr> shape;
  Scope scope;
  // Row strides in elements, outermost first; empty means dense row-major. storage_align and
  // padding make strides larger than the dense ones to avoid shared-memory bank conflicts.
  std::vector<Expr> strides;
  // Asked for by the schedule (pipeline, double_buffer): lowering gives this shared copy that many
  // slots and refills them ahead, where the loop that refills it has the shape for that
  // (tir/lower/pipeline_copies.h). 1: one slot, no pipelining.
  int64_t pipeline_stages = 1;
  // Set by lowering on a pipelined copy: a store of a global load into it may complete
  // asynchronously (cp.async on CUDA), by the barrier that waits for its group of copies. The
  // pipeline pass places every barrier such a buffer needs.
  bool async_fill = false;
};

Buffer MakeBuffer(std::string name, DType dtype, std::vector<Expr> shape, Scope scope = Scope::kGlobal,
                  std::vector<Expr> strides = {});

// `b` with the lowering flags (pipeline_stages, async_fill) of `from`: for passes that remake a buffer.
Buffer WithFlagsOf(const Buffer& b, const BufferNode& from);

// Number of elements (product of the shape), as an expression.
Expr BufferElemCount(const Buffer& b);
// Strides of every dimension (the given ones or the dense row-major ones).
std::vector<Expr> BufferStrides(const Buffer& b);

}  // namespace autotune::tir
