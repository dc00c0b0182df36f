// Tensor-core schedules of float16/bfloat16 matrix products (gemm, batch_matmul), MetaSchedule's
// multi-level tiling with tensor cores: the output in block tiles of warps, each warp computing
// tiles of 16x8 mma.sync accumulators; the inputs staged through shared memory a chunk of the
// reduction at a time (rows padded against bank conflicts; copies pipelined up to 4 chunks deep)
// and loaded into fragments with ldmatrix; the output stage stores the accumulators through any elementwise epilogue. The
// cuda.tensor_core sketch (search/rules/tensor_core_tiling.cc) samples the factors.
#pragma once

#include <cstdint>

#include "search/rules/schedule_rule.h"
#include "support/result.h"
#include "tir/ops/workload.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

// Literal or sampled factors of the tiling.
struct TensorCoreFactors {
  tir::FactorArg warps_m, warps_n;  // warps of a block along the output's rows and columns
  tir::FactorArg tiles_m, tiles_n;  // 16x8 accumulator tiles of a warp along each
  tir::FactorArg k_steps;           // 16-deep mma steps per shared-memory chunk of the reduction
  tir::FactorArg stages;            // pipeline stages of the shared copies (cp.async): 1 (none) to 4
};

// The shape of a matrix product: M, N, K of its reduction stage.
struct MmaShape {
  int64_t m = 0, n = 0, k = 0;
};
// The product's shape when the workload of `fresh` is one tensor cores take (a 16-bit output, a
// reduction reading two inputs directly at its iterators), else why not.
Result<MmaShape> TensorCoreShape(const tir::Schedule& fresh, const SketchRoles& roles);
// The shape the tiling covers: M and N as they are when multiples of 64, else rounded up to whole
// mma tiles (16 rows, 8 columns) when below 64, else to multiples of 64; K as it is when a multiple
// of 16, else rounded up to a multiple of 32 (pad_einsum: the operands are read zero-padded and the
// padding of the output is computed, never stored).
MmaShape PaddedShape(const MmaShape& s);

// Applies the tiling to a fresh schedule whose roles are `roles` and product shape `shape`
// (TensorCoreShape's).
Result<void> ApplyTensorCoreTiling(tir::Schedule& sch, const SketchRoles& roles, const MmaShape& shape,
                                   const TensorCoreFactors& f);

// The same with fixed numbers, on a fresh schedule of `workload` (tests, examples).
struct TensorCoreTiling {
  int64_t warps_m = 2, warps_n = 2, tiles_m = 2, tiles_n = 4, k_steps = 2, stages = 2;
};
Result<tir::Schedule> TensorCoreSchedule(const tir::Workload& workload, const TensorCoreTiling& tiling);

}  // namespace autotune::search
