// UnrollLoops: applies Ansor's auto_unroll_max_step pragma, the way TVM's UnrollLoop pass does.
//
// For every loop with auto_unroll_max_step = N > 0, each serial loop inside it (not the pragma loop
// itself; an inner pragma overrides N for its own subtree) becomes ForKind::kUnrolled when
//   - its extent is a constant,
//   - every loop in its body is (or becomes) unrolled, and
//   - its step count is at most N, where the step count of a loop is its extent times the step count
//     of its body; the step count of a Seq or conditional is the sum over its parts, and a store or
//     barrier counts 1.
// Loops already kUnrolled stay so (and count as unrolled); vectorized, parallel and thread-bound loops
// never change kind and, like any loop left rolled, keep the loops around them rolled. A kUnrolled loop
// with a non-constant extent becomes serial (it cannot be unrolled), wherever it is.
#pragma once

#include "tir/stmt.h"

namespace autotune::tir {

Stmt UnrollLoops(const Stmt& s);

}  // namespace autotune::tir
