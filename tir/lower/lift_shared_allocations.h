// LiftSharedAllocations: moves every shared-scope Allocate of a kernel to block level.
//
// Shared memory exists once per thread block, and the CUDA and C code generators expect it declared at
// block level. A kernel is the subtree of an outermost thread-bound loop. Each shared Allocate inside
// a kernel is removed from where it is (under threadIdx, vthread or serial loops, conditionals, ...)
// and re-inserted just inside the innermost blockIdx loop that encloses it, or around the kernel's
// outermost loop when no blockIdx loop encloses it. Lifted allocations keep their order of appearance
// (the first one outermost). Shared allocations outside any kernel, and local ones, are not moved.
// Shared allocation shapes must be constant (an internal error otherwise).
#pragma once

#include "tir/stmt.h"

namespace autotune::tir {

Stmt LiftSharedAllocations(const Stmt& s);

}  // namespace autotune::tir
