// InsertBarriers: inserts Barrier() statements so that threads of a block see each other's
// shared-memory writes, and do not overwrite shared data that other threads still read.
//
// Works in each kernel's thread scope: the body of every outermost threadIdx loop (nested thread-bound
// loops inside it are transparent). Only accesses of shared-scope buffers matter. Walking the scope in
// program order with the set of accesses made since the last barrier, a barrier is needed before a
// statement that reads a buffer written since then (read after write) or writes a buffer read since
// then (write after read). Within a loop the accesses left at the end of one iteration are carried to
// the start of the next, so a loop whose body reads a buffer and then writes it again in the next
// iteration gets a barrier in its body before the writer (or at the start of the body when the writer
// is not a child of a sequence there).
//
// Placement: a barrier goes into the Seq where the conflicting accesses were made, right before the
// child that contains the later access; so a conflict with accesses made before a loop puts the barrier
// before the loop rather than into its body. No barrier is ever put under a thread-dependent condition
// or loop bound (one that uses a threadIdx/vthread var, a var of such a loop, or a load); conflicts
// between accesses both inside such divergent code cannot be fixed and are left alone. Adjacent
// barriers are merged. A kernel with no shared-memory conflict gets no barrier.
#pragma once

#include "tir/stmt.h"

namespace autotune::tir {

Stmt InsertBarriers(const Stmt& s);

}  // namespace autotune::tir
