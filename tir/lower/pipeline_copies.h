// PipelineCopies: software pipelining of shared-memory copies marked by the schedule (pipeline,
// double_buffer: BufferNode::pipeline_stages = S > 1).
//
// After barrier insertion a loop that refills shared copies reads
//     for v in [lo, lo + N):  barrier; fill(v); barrier; compute(v)
// where the fill statements write only marked shared buffers (and read no shared memory) and the
// compute reads them. When every buffer the fills write is marked, and those buffers are used nowhere
// else, the loop becomes (S = the smallest count asked for, at most N; slot(t) = (t - lo) % S)
//     barrier
//     fill(lo) -> slot 0; barrier(async_wait=1) ... fill(lo + S - 3) -> slot S - 3; barrier(async_wait=S-2)
//     fill(lo + S - 2) -> slot S - 2
//     for v in [lo, lo + N):
//       barrier(async_wait=S-2)    // tile v has landed, and every thread is done with tile v - 1
//       if (v + S - 1 < lo + N) fill(v + S - 1) -> slot(v + S - 1)   // the slot tile v - 1 used
//       compute(v) on slot(v)
// (16-bit copies that cannot be asynchronous load into registers before compute(v) and store into
// their slot after it: tir/lower/register_staging.h.)
// The copies of the next S - 1 tiles then overlap the arithmetic on this one, with one barrier an
// iteration. Each buffer gets S slots (S times the shared memory) and the flag async_fill, so that
// code generation may issue its fills asynchronously (cp.async): a barrier with async_wait = k first
// closes the group of copies this thread issued since the last one, then waits until at most k groups
// are in flight. Counting the groups: before iteration v's wait the groups are tiles 0 .. S - 3 (one
// each, closed in the prologue) and then one per iteration u <= v holding tile u + S - 2 (empty near
// the end); tile v's group has exactly S - 2 newer ones. The prologue's barriers never wait (at most
// s + 1 groups exist after the s-th); they only close groups. On a target that copies synchronously
// (the C path) the same code is correct as it stands. Loops of any other shape, and marked buffers they
// do not match, are left as they are.
#pragma once

#include "tir/stmt.h"

namespace autotune::tir {

// `s` is a lowered, flattened body with barriers inserted.
Stmt PipelineCopies(const Stmt& s);

}  // namespace autotune::tir
