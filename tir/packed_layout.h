// Packed inputs: a kernel input (a convolution's weights) that the kernel reads in a layout of its
// own, made once by a pack function outside the timed call, as oneDNN reorders weights once and
// TVM's layout-free buffers are rewritten ahead of time. The layout splits one dimension by a factor
// and moves the inner part last: weights K x C x R x S packed by 32 along K are K/32 x C x R x S x 32,
// so the 32 output channels a vector holds lie side by side for every (c, r, s). A dimension the
// factor does not divide is padded with zeros.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tir/buffer.h"
#include "tir/stmt.h"

namespace autotune::tir {

struct PrimFunc;

struct PackedLayout {
  int dim = 0;         // the dimension split
  int64_t factor = 1;  // its inner part, moved last
};

// The packed shape of a tensor of `shape`: ceil(shape[dim] / factor) at dim, factor appended.
std::vector<int64_t> PackedShape(const std::vector<int64_t>& shape, const PackedLayout& layout);
// Where the element at `indices` of the original lies in the packed tensor.
std::vector<Expr> PackedIndices(const std::vector<Expr>& indices, const PackedLayout& layout);

// A kernel parameter that takes a packed tensor: params[param] is `packed` (flattened once lowered),
// made by PackFunc from `source`, the tensor the workload defines.
struct PackedParam {
  int param = 0;
  Buffer source, packed;
  PackedLayout layout;
};

// Elements of the packed tensor.
int64_t PackedElements(const PackedParam& pack);

// `void name(source, packed)`: every element of `packed` written, zero past the source's extent;
// lowered (flat buffers), its outermost loop parallel and its innermost vectorized.
PrimFunc PackFunc(const std::string& name, const PackedParam& pack);

}  // namespace autotune::tir
