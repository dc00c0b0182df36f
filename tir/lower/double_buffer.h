// DoubleBuffer: software pipelining of shared-memory copies marked double_buffer by the schedule.
//
// After barrier insertion a loop that refills shared copies reads
//     for v in [lo, lo + N):  barrier; fill(v); barrier; compute(v)
// where the fill statements write only marked shared buffers (and read no shared memory) and the
// compute reads them. When every buffer the fills write is marked, and those buffers are used nowhere
// else, the loop becomes
//     barrier; fill(lo) -> half 0; barrier(async_wait=0)
//     for v in [lo, lo + N):
//       if (v + 1 < lo + N) fill(v + 1) -> half (v + 1 - lo) % 2
//       barrier(async_wait=1)      // this thread's copies of tile v have landed; all threads' are visible
//       compute(v) on half (v - lo) % 2
//       barrier                    // before the next iteration overwrites the half just read
// The copies of the next tile then overlap the arithmetic on this one. Each buffer gets a second half
// (twice the shared memory) and the flag async_fill, so that code generation may issue its fills
// asynchronously (cp.async): the barrier with async_wait = 1 waits for all but the newest group of
// copies. On a target that copies synchronously (the C path) the same code is correct as it stands.
// Loops of any other shape, and marked buffers they do not match, are left as they are.
#pragma once

#include "tir/stmt.h"

namespace autotune::tir {

// `s` is a lowered, flattened body with barriers inserted.
Stmt DoubleBuffer(const Stmt& s);

}  // namespace autotune::tir
