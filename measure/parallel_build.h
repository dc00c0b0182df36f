// BuildInParallel: what both builders do with a batch: compile its candidates on a few threads, the
// largest first (by tir::UnrolledStatementCount of the lowered function, with the loops the
// builder's backend expands), results in input order.
// Largest first because a batch is done only when its slowest compile is: a kernel that takes 20 s to
// compile, started last, would keep every other thread idle for most of that time.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "measure/builder.h"
#include "measure/compile_slots.h"
#include "tir/analysis/unrolled_size.h"

namespace autotune::measure {

// `slots`: the builder's compilers, shared with its other Build calls (measure/compile_slots.h); a
// thread keeps its slot from compile to compile of the batch unless an older call waits for one.
// `expanded`: the loops the backend's compiler expands (tir/analysis/unrolled_size.h).
// `on_built` (if set) gets each result as soon as its compile is done (Builder::OnBuilt).
std::vector<BuildResult> BuildInParallel(const std::vector<BuildInput>& inputs, CompileSlots& slots,
                                         const std::function<BuildResult(const BuildInput&)>& build_one,
                                         tir::LoopExpanded expanded = tir::MarkedUnrolled,
                                         const Builder::OnBuilt& on_built = {});

// The order BuildInParallel starts them in: decreasing unrolled size, ties (and ready sources, which
// count 0) in input order.
std::vector<size_t> LargestFirst(const std::vector<BuildInput>& inputs, tir::LoopExpanded expanded = tir::MarkedUnrolled);

}  // namespace autotune::measure
