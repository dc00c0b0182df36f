// Replaces buffers by others throughout a statement: their loads, stores and allocations.
#pragma once

#include <unordered_map>

#include "tir/buffer.h"
#include "tir/stmt.h"

namespace autotune::tir {

// Every use of a key of `map` in `s` becomes its value; the rest is shared with `s`.
Stmt ReplaceBuffers(const Stmt& s, const std::unordered_map<const BufferNode*, Buffer>& map);

}  // namespace autotune::tir
