// Pinning a cpu kernel's OpenMP threads, one to each CPU this process may use (its affinity mask, so
// jobs given disjoint CPUs by taskset or a cpuset keep to them): a thread that the scheduler moves
// to another core mid-repeat loses its caches and times the move, one of the CPU runner's sources
// of repeat-to-repeat noise.
#pragma once

namespace autotune::measure {

// Runs one parallel region of the kernel library's OpenMP runtime (GCC's libgomp entry point, which
// LLVM's runtime also provides) in which thread i pins itself to the i-th allowed CPU; the runtime
// keeps its threads for the kernel's regions of the same size. False where the library has no
// OpenMP runtime, its team has fewer threads than the CPUs allowed (which of them to take is the
// scheduler's choice then), or the affinity cannot be set: the kernel then runs unpinned.
bool PinOpenMpThreads(void* kernel_lib);

}  // namespace autotune::measure
