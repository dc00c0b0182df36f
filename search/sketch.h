// Sketches: schedule structures as ordered lists of schedule rules (search/rules/), per target. The
// table is data: a sketch is offered for a workload when every one of its rules applies (and its own
// condition holds, where it has one), and a random schedule first picks one of the offered sketches,
// then samples its decisions.
//
//  - cuda.tensor_core: float16/bfloat16 matrix products (gemm, batch_matmul) on tensor cores: warps
//    of 16x8 mma.sync tiles, inputs through shared memory and ldmatrix (search/tensor_core_schedule.h);
//    offered for 16-bit outputs of any shape (padded to whole tiles), and their default. Where M, N
//    and K are all at least 16 it is searched alone unless a job names its sketches: on the H100 every
//    such product measured had its best kernel here, most of its kernels beat the best FMA one
//    (all of them for the 1000-4096 gemms), and a job searching the FMA sketches too spent half to
//    nine tenths of its trials on them (docs/BENCHMARKS.md).
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
//  - cuda.tensor_core_split_k: cuda.split_k's partial sums on tensor cores (the parts a batch axis
//    of the product), for 16-bit or tf32 products with outputs as small as split_k takes, whose
//    output tiles alone leave SMs idle; combine_partials sums them through the epilogue. (A product
//    of whole tiles searched by cuda.tensor_core alone does not get it unless named.)
//  - cuda.im2col (not searched unless asked for: `tune --sketches`): cuda.tiled for a convolution
//    whose input read is reindexed into its im2col matrix (tir's reindex), so the shared copy holds
//    an im2col tile, read as a gemm reads its B tile, rather than the window's box.
//  - cuda.split_k_im2col (only when named): cuda.split_k whose partial sums read the im2col matrix.
//  - cuda.direct: cuda.tiled without the shared copies, for reductions of at most a 7x7 window per
//    output (depthwise convolutions): each thread reads its window straight from global memory
//    (padding inlined into the read), so no block waits at a barrier for a copy, and the few outputs
//    that share an input element find it in L1. On a 7x7 or 14x14 plane of a batch-1 depthwise
//    layer, the copy's fill and barrier are most of the kernel.
//  - cuda.rows / cpu.rows: row operators (softmax, layer_norm, rms_norm, norm) in one kernel, rows
//    over blocks (cuda: a row's reductions across the threads of its block) or parallel (cpu);
//    search/rules/rows_gpu.cc and rows_cpu.cc.
//  - cuda.rows_split: a few long rows with one sum each (norm, rms_norm): the sum split in parts over
//    blocks (rfactor: a partial-sums kernel), then cuda.rows on the parts (split_rows.cc).
//  - cpu.registers: the output tile in vector registers across the whole reduction (an accumulator
//    stage, as cuda.tiled's, computed per outer tile; register_tiling_cpu.cc), parallel outer tiles,
//    the operand read along the tile's vectors copied per parallel tile where decided
//    (copy_operand_cpu.cc), padding and the epilogue inlined; the default for contractions.
//  - cpu.tiled: SSRSRS: padding inlined, outer spatial tiles fused and parallel, innermost spatial
//    loop vectorized, the epilogue computed per outer tile, an unroll pragma.
#pragma once

#include <string>
#include <vector>

#include "search/sketch_decisions.h"
#include "support/result.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

struct SketchRoles;  // search/rules/schedule_rule.h

struct SketchSpec {
  std::string name;
  tir::TargetKind target;
  std::vector<std::string> rules;  // applied in this order
  // Searched unless a job names its sketches; false: only when named (not yet shown to pay off).
  bool by_default = true;
  // A condition on the workload beyond its rules' own (null: none), checked on the fresh schedule.
  bool (*offered)(const tir::Schedule& fresh, const SketchRoles& roles) = nullptr;
  // For row operators (FindRowRoles), not contractions: the two kinds share no sketch.
  bool for_rows = false;
  // When set and true for the workload, this sketch is the only one searched by default (the others
  // only when a job names them).
  bool (*searched_alone)(const tir::Schedule& fresh, const SketchRoles& roles) = nullptr;
};

// Every built-in sketch; per target, the first of a contraction's and the first offered of a row
// operator's is the default schedule's (DefaultSketch).
const std::vector<SketchSpec>& BuiltinSketches();
// The sketches offered for the workload of `fresh` (an untransformed schedule) on its target, in
// table order: of those named in `chosen` (empty: the sketches searched by default; just one where
// an offered sketch is searched alone).
std::vector<const SketchSpec*> ApplicableSketches(const tir::Schedule& fresh, const std::vector<std::string>& chosen = {});
// Whether the workload of `fresh` is a row operator (cuda.rows, cpu.rows), not a contraction.
bool IsRowOperator(const tir::Schedule& fresh);
// The sketch of the default schedule of `fresh`'s workload on its target, or null.
const SketchSpec* DefaultSketch(const tir::Schedule& fresh);
// The sketch of this name, or null.
const SketchSpec* FindSketch(const std::string& name);
// Every built-in sketch's name, comma-separated, for messages about an unknown one.
std::string BuiltinSketchNames();
// The built-in sketch of `target` that made `trace`: the one whose rules' marks (ScheduleRule::Mark)
// are exactly the marks the trace holds (on cuda a trace without marks, e.g. a hand-written
// one, reads no input through shared memory: cuda.direct); null when none is. A job searching some
// sketches seeds its search only with their traces.
const SketchSpec* SketchOfTrace(const tir::Trace& trace, tir::TargetKind target);

// Applies `sketch` to `sch` (a fresh schedule), deciding what `decisions` fixes and sampling the rest.
Result<void> ApplySketch(tir::Schedule& sch, const SketchSpec& sketch, const SketchDecisions& decisions);

}  // namespace autotune::search
