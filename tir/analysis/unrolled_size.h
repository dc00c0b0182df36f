// UnrolledStatementCount: how many statements a function's body becomes once the loops its compiler
// expands are expanded (each store or barrier counts 1; an expanded loop of constant extent n counts
// n times its body; any other loop counts its body once). A proxy for the work a compiler does on
// the generated code: the builders compile the largest candidates first, so that one slow compile
// starts early instead of holding up the end of a batch.
#pragma once

#include <cstdint>

#include "tir/stmt.h"

namespace autotune::tir {

// Which loops a backend expands (a rule of constant extent > 1 is applied on top).
using LoopExpanded = bool (*)(const ForNode* loop);

// The default rule: loops marked ForKind::kUnrolled (what the C backend asks its compiler to unroll).
bool MarkedUnrolled(const ForNode* loop);

// The CUDA builder passes tir::CudaFullyUnrolls, which also expands vectorized loops and the loops
// over a thread's register arrays: that estimate of the
// compile cost orders a round's compiles better than the kUnrolled-only count.
int64_t UnrolledStatementCount(const Stmt& s, LoopExpanded expanded = MarkedUnrolled);

}  // namespace autotune::tir
