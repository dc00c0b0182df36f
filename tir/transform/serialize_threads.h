// SerializeThreads: runs a GPU-style lowered kernel on one CPU thread with the same semantics, so a
// CUDA schedule can be built and checked through the C path (tests, machines without a GPU).
//
// blockIdx loops become serial loops. A threadIdx loop becomes a serial loop, split (loop fission)
// at every barrier so that all threads finish the code before a barrier before any thread runs the
// code after it:
//   T(t, Seq(a, barrier, b))         -> Seq(T(t, a), T(t, b))
//   T(t, For(k, body with barriers)) -> For(k, T(t, body))       (bounds must not depend on t)
//   T(t, If(c, body with barriers))  -> If(c, T(t, body))        (c must not depend on t)
//   T(t, Allocate(local buf[n], ..)) -> Allocate(local buf[n * extent(t)], ..) with buf[i] -> buf[t * n + i]
// since a thread's local value may live across a barrier. Nested threadIdx loops are handled as one
// group. A barrier under a thread-dependent condition or loop bound is an invalid GPU program.
#pragma once

#include "support/result.h"
#include "tir/stmt.h"

namespace autotune::tir {

// The statement without thread-bound loops and barriers, or why it is not a valid GPU program.
Result<Stmt> SerializeThreads(const Stmt& s);

// Whether `s` has thread-bound loops or barriers, i.e. needs SerializeThreads before C codegen.
bool NeedsThreadSerialization(const Stmt& s);

}  // namespace autotune::tir
