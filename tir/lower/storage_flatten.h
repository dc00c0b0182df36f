// StorageFlatten: makes every buffer one-dimensional.
//
// Each buffer (parameters included) is replaced by a new buffer of the same name, dtype and scope
// whose shape is [element count], where the element count honors strides (strides[0] * shape[0], so
// padded strides make the allocation bigger). Every load and store index list [i_0, ..., i_n-1]
// becomes the single index sum(i_k * stride_k), simplified with the ranges of the enclosing loops.
// All uses of one buffer map to the same new buffer node. Allocate shapes and strides must be
// constant (anything else is an internal error).
#pragma once

#include "tir/prim_func.h"

namespace autotune::tir {

PrimFunc StorageFlatten(const PrimFunc& f);

}  // namespace autotune::tir
