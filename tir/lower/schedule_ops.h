// The first lowering step: turns a schedule state into a loop nest. For every stage it infers the
// region each iteration of its attach loop needs (bound inference), builds the stage's loops from
// its split/fuse relations with predicates for partial tiles, allocates intermediate buffers where
// their stage is attached, and identifies loops bound to the same GPU thread index.
#pragma once

#include <string>

#include "tir/prim_func.h"
#include "support/result.h"
#include "tir/schedule/state.h"

namespace autotune::tir {

// Errors are schedules that cannot be lowered (e.g. a producer binds more threads than its consumer).
Result<PrimFunc> ScheduleOps(const ScheduleState& state, const std::string& name);

}  // namespace autotune::tir
