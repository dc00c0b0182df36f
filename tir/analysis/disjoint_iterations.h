// Whether the iterations of a loop store a buffer in ranges of elements apart from each other, so
// that no element is written by two iterations: the CUDA backend then needs no barrier between the
// iterations of a block-level loop for that buffer (threads of one iteration may still share an
// element; a later iteration never writes it again).
#pragma once

#include <unordered_set>

#include "tir/analysis/int_bound.h"
#include "tir/stmt.h"

namespace autotune::tir {

// True when every store of `buffer` in `loop`'s body indexes its (flat) elements as c * loop.var +
// rest with one coefficient c for all of them, and the values `rest` takes in one iteration lie
// within fewer than |c| consecutive elements. `varying` are the variables bound outside the loop that
// differ between threads (their ranges in `outer`); other variables bound outside are constant over
// the loop, and those bound inside it range over their loops.
bool IterationsStoreApart(const ForNode& loop, const BufferNode* buffer, const BoundAnalyzer& outer,
                          const std::unordered_set<const VarNode*>& varying);

}  // namespace autotune::tir
