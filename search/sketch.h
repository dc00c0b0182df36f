// Sketches: schedule structures as ordered lists of schedule rules (search/rules/), per target. The
// table is data: a sketch is offered for a workload when every one of its rules applies, and a random
// schedule first picks one of the offered sketches, then samples its decisions.
//
//  - cuda.tiled: Ansor's SSSRRSRS structure: the accumulator in registers (cache_write local);
//    every input read through shared memory (padding inlined into the copy); the epilogue inlined
//    into the copy-out; spatial tiles at block, virtual thread, thread and inner levels, reduction
//    tiles at three levels; cooperative loads of the shared copies by all threads at the outer
//    reduction loop with 1, 2 or 4 elements per thread and step; an unroll pragma.
//  - cuda.split_k: for small outputs with long reductions (e.g. batch-1 convolutions late in a
//    network), the outermost reduction axis is split and rfactor-ed: a first kernel computes that
//    many partial sums per output element with the cuda.tiled structure (the partials are one more
//    spatial axis, so there is enough parallel work to fill the GPU), a second sums them and applies
//    the epilogue.
//  - cpu.tiled: SSRSRS: padding inlined, outer spatial tiles fused and parallel, innermost spatial
//    loop vectorized, the epilogue computed per outer tile, an unroll pragma.
#pragma once

#include <string>
#include <vector>

#include "search/sketch_decisions.h"
#include "tir/result.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

struct SketchSpec {
  std::string name;
  tir::TargetKind target;
  std::vector<std::string> rules;  // applied in this order
};

// Every built-in sketch; per target, the first is the default schedule's.
const std::vector<SketchSpec>& BuiltinSketches();
// The sketches offered for the workload of `fresh` (an untransformed schedule) on its target, in
// table order.
std::vector<const SketchSpec*> ApplicableSketches(const tir::Schedule& fresh);
// The sketch of this name, or null.
const SketchSpec* FindSketch(const std::string& name);

// Applies `sketch` to `sch` (a fresh schedule), deciding what `decisions` fixes and sampling the rest.
Result<void> ApplySketch(tir::Schedule& sch, const SketchSpec& sketch, const SketchDecisions& decisions);

}  // namespace autotune::search
