// InjectVirtualThread: removes every vthread loop (ThreadTag::kVThread) while keeping its meaning.
//
// A virtual thread is a loop whose iterations are independent "threads" multiplexed on one real
// thread. The loop is pushed inward, the way TVM's InjectVirtualThread does:
//   - through a Seq (each child separately), through loops that are not vectorized and whose bounds do
//     not use the vthread var (thread-bound loops included), through conditionals whose condition does
//     not use it, and through Allocate;
//   - a statement that does not depend on the vthread (does not use its var and touches no buffer
//     written in a vthread-dependent way) is emitted once: such writes (e.g. shared-memory loads
//     computed for all virtual threads) are idempotent;
//   - any other statement is wrapped in an unrolled loop (ForKind::kUnrolled) over a fresh copy of the
//     vthread var, so the copies end up at the innermost statements.
// A buffer allocated inside the vthread loop and written with vthread-dependent indices, values or
// control gets one copy per virtual thread: a new leading dimension of the vthread extent, indexed by
// the vthread var. Barriers are emitted once and never inside a vthread loop (a barrier under a
// vthread-dependent statement is an internal error). Nested vthread loops are removed innermost first.
#pragma once

#include "tir/stmt.h"

namespace autotune::tir {

Stmt InjectVirtualThread(const Stmt& s);

}  // namespace autotune::tir
