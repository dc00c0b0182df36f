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

struct BufferNode {
  std::string name;
  DType dtype;
  std::vector<Expr> shape;
  Scope scope;
  // Row strides in elements, outermost first; empty means dense row-major. storage_align and
  // padding make strides larger than the dense ones to avoid shared-memory bank conflicts.
  std::vector<Expr> strides;
  // Asked for by the schedule (double_buffer): lowering gives this shared copy a second half and
  // refills it one iteration ahead, where the loop that refills it has the shape for that.
  bool double_buffer = false;
  // Set by lowering on a double-buffered copy: a store of a global load into it may complete
  // asynchronously (cp.async on CUDA), by the next barrier that waits for copies.
  bool async_fill = false;
};

Buffer MakeBuffer(std::string name, DType dtype, std::vector<Expr> shape, Scope scope = Scope::kGlobal,
                  std::vector<Expr> strides = {});

// `b` with the lowering flags (double_buffer, async_fill) of `from`: for passes that remake a buffer.
Buffer WithFlagsOf(const Buffer& b, const BufferNode& from);

// Number of elements (product of the shape), as an expression.
Expr BufferElemCount(const Buffer& b);
// Strides of every dimension (the given ones or the dense row-major ones).
std::vector<Expr> BufferStrides(const Buffer& b);

}  // namespace autotune::tir
