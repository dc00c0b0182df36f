// Whether a statement holds a barrier (__syncthreads) anywhere below it: lowering passes that move
// or copy statements per thread must not do so with one inside.
#pragma once

#include "tir/stmt.h"

namespace autotune::tir {

// False for an empty statement.
bool ContainsBarrier(const Stmt& s);
// Whether a statement holds a warp shuffle (ShuffleXor), which like a barrier needs every thread.
bool ContainsShuffle(const Stmt& s);
bool ContainsShuffle(const Expr& e);

}  // namespace autotune::tir
