// BuildInParallel: what both builders do with a batch: compile its candidates on a few threads, the
// largest first (by tir::UnrolledStatementCount of the lowered function), results in input order.
// Largest first because a batch is done only when its slowest compile is: a kernel that takes 20 s to
// compile, started last, would keep every other thread idle for most of that time.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "measure/builder.h"

namespace autotune::measure {

// `threads`: compilers at once, 0 for one per hardware thread (never more than the batch).
std::vector<BuildResult> BuildInParallel(const std::vector<BuildInput>& inputs, int threads,
                                         const std::function<BuildResult(const BuildInput&)>& build_one);

// The order BuildInParallel starts them in: decreasing unrolled size, ties (and ready sources, which
// count 0) in input order.
std::vector<size_t> LargestFirst(const std::vector<BuildInput>& inputs);

}  // namespace autotune::measure
