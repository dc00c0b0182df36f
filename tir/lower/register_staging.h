// Register staging of the synchronous part of a pipelined copy's refill. A copy CUDA cannot issue
// asynchronously (16-bit elements gathered one or two at a time: an im2col tile of an NCHW input)
// loads into registers and stores into shared memory in one statement, so the warp stalls on the
// load before the arithmetic after it can start. Split in two, the loads go first (into a local
// `stage` array, one element per copy a thread makes), the arithmetic of the iteration runs while
// they are in flight, and the stores into shared memory come after it. Copies CUDA issues as
// cp.async (tir/analysis/packed_copy.h, float32 elements) are left in the first part.
#pragma once

#include <optional>
#include <unordered_set>

#include "tir/buffer.h"
#include "tir/stmt.h"

namespace autotune::tir {

struct StagedFill {
  Buffer stage;  // local, one element per staged store a thread makes
  Stmt loads;    // the fill with each staged store writing its value into `stage` instead
  Stmt stores;   // the staged stores alone, from `stage` into their shared copies
};

// `fill` split as above for the stores into `buffers`; nothing when no store needs it, or the stage
// would exceed `max_elements` a thread (or a loop around a store has no constant extent).
std::optional<StagedFill> StageSynchronousFills(const Stmt& fill, const std::unordered_set<const BufferNode*>& buffers,
                                                int64_t max_elements = 64);

}  // namespace autotune::tir
