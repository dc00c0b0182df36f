// A parallel loop over indices on short-lived threads: what the search and the cost model use to
// lower thousands of independent candidates at once.
#pragma once

#include <cstddef>
#include <functional>

namespace autotune {

// Runs fn(0) .. fn(n - 1) on up to `threads` threads, the calling one included, and returns when all
// have run. Which thread runs which index is unspecified: fn must be pure apart from writing its own
// output slot. The first exception fn throws is rethrown here once every thread has joined.
void ParallelFor(int threads, size_t n, const std::function<void(size_t)>& fn);

// The cores this process may run on: its CPU affinity mask (taskset, a container's cpuset), else the
// machine's hardware threads; at least 1. What "one thread per core" means everywhere in autotune, so
// that two jobs pinned to halves of a machine (one per GPU) do not each start a thread per core of all.
int UsableCores();

}  // namespace autotune
