// A thread's own copy of a workload's IR for the search's parallel work. Schedules made from one
// workload on many threads at once all copy references to its nodes (its buffers, its variables):
// atomic reference counts on cache lines every core writes, which made the search scale poorly
// beyond a few cores. A copy rebuilt from the workload's text has the same key and shares no node.
#pragma once

#include <memory>

#include "tir/ops/workload.h"

namespace autotune::search {

// `w` rebuilt from its operator, shape, epilogue and number type; null when it cannot be (a workload
// made otherwise) or the rebuilt one's key differs.
std::shared_ptr<const tir::Workload> RebuiltWorkload(const tir::Workload& w);

// This thread's copy of `w` (made at its first call on the thread for w's compute definition), or
// `w` itself where it cannot be rebuilt. The copy lives as long as the thread or the next workload.
const tir::Workload& ThreadWorkload(const tir::Workload& w);

}  // namespace autotune::search
