// UnrolledStatementCount: how many statements a function's body becomes once its unrolled loops are
// expanded (each store or barrier counts 1; a kUnrolled loop of constant extent n counts
// n times its body; any other loop counts its body once). A proxy for the work a compiler does on the
// generated code: the builders compile the largest candidates first, so that one slow compile starts
// early instead of holding up the end of a batch.
#pragma once

#include <cstdint>

#include "tir/stmt.h"

namespace autotune::tir {

int64_t UnrolledStatementCount(const Stmt& s);

}  // namespace autotune::tir
