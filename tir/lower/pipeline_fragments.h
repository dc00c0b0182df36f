// PipelineFragments: a warp's fragment loads one mma step ahead of its mma (CUTLASS's warp-level
// double buffering), and the pipelined copies' barrier moved where it no longer drains the warp.
//
// After PipelineCopies a tensor-core main loop reads (S stages, n steps a chunk, n even)
//     for v in [lo, hi):
//       barrier(async_wait=S-2)
//       if (v + S - 1 < hi) fill(v + S - 1)
//       for k in [0, n): allocate F { load F from chunk v, step k; mma(k) on F }
// Every warp waits at the barrier with nothing in flight, then on its first fragment loads. Here
// the fragments get two register sets, the step loop is unrolled, and the loads of step k + 1 (of
// the next chunk's step 0 at the last step) go to the set the mma of step k does not read:
//     allocate F0, F1:
//       barrier(async_wait=S-2); load F0 from chunk lo, step 0
//       for v in [lo, hi):
//         if (v + S - 1 < hi) fill(v + S - 1)
//         step k = 0 .. n-1:
//           if k + 1 < n: load F[(k+1)%2] from chunk v, step k + 1
//           if k == n - 2: barrier(async_wait=S-2)   // chunk v + 1 landed; every warp has read chunk v
//           if k == n - 1 and v + 1 < hi: load F0 from chunk v + 1, step 0
//           mma(k) on F[k%2]
// The barrier comes after the last loads from chunk v (so the fill at the top of the next iteration
// may overwrite chunk v - 1's slot, the one it refills) and before the loads from chunk v + 1, with
// the group counting of PipelineCopies unchanged (one closing barrier an iteration). Register-staged
// fills (tir/lower/register_staging.h) keep their loads at the top; their stores go before the
// barrier with two stages (chunk v + 1, which they fill, is read right after it) and after the last
// mma with more. Loops of any other shape (odd n, no tensorized tile, a step whose arithmetic reads
// shared memory, which other warps may refill after the moved barrier) are left as they are.
#pragma once

#include "tir/prim_func.h"
#include "tir/stmt.h"

namespace autotune::tir {

// `s` is a body after PipelineCopies.
Stmt PipelineFragments(const Stmt& s);

// The same on a function, kept only where it does not take a kernel over the register budget of
// CheckGpuValidity (tir/analysis/gpu_validity.h) when the function was within it: twice the
// fragments must not make a kernel that fitted spill.
void PipelineFragmentsWithinBudget(PrimFunc& f);

}  // namespace autotune::tir
