// Tensor-core schedules of matrix products (gemm, batch_matmul) in float16/bfloat16, and in float32
// at tf32 or 3xtf32 precision: MetaSchedule's multi-level tiling with tensor cores. The output in
// block tiles of warps, each warp computing tiles of 16x8 mma.sync accumulators, a step of the
// reduction deep (16 for 16-bit inputs: m16n8k16; 8 for TF32: m16n8k8); the inputs staged through
// shared memory a chunk of the reduction at a time (rows padded against bank conflicts; copies
// pipelined up to 4 chunks deep) and loaded into fragments (ldmatrix where it fits); the output stage
// stores the accumulators through any elementwise epilogue. A contraction that is not laid out as a
// matrix product (a convolution: implicit GEMM) is first rewritten into one (matrix_form): the
// weights are A, the im2col matrix B, gathered into the shared copies and never stored, and the
// output tile is stored back at the convolution's coordinates. The cuda.tensor_core sketch
// (search/rules/tensor_core_tiling.cc) samples the factors.
#pragma once

#include <cstdint>
#include <optional>

#include "search/rules/schedule_rule.h"
#include "support/result.h"
#include "tir/ops/workload.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

// Literal or sampled factors of the tiling.
struct TensorCoreFactors {
  tir::FactorArg warps_m, warps_n;  // warps of a block along the output's rows and columns
  tir::FactorArg tiles_m, tiles_n;  // 16x8 accumulator tiles of a warp along each
  tir::FactorArg k_steps;           // mma steps (MmaShape::step deep) per shared-memory chunk of the reduction
  tir::FactorArg stages;            // pipeline stages of the shared copies (cp.async): 1 (none) to 4
  // Elements a thread copies at a time into B's shared copy; unset: 16 bytes (a matrix form's gather
  // may do better with fewer, a warp's lanes then on neighbouring elements).
  std::optional<tir::FactorArg> b_copy_vector;
  bool b_n_rows = false;  // B's shared copy laid out [n][k] (read by ldmatrix without .trans)
  // Block rows that consecutive blocks walk down before the next block column (1: along the rows).
  tir::FactorArg block_group = int64_t{1};
};

// The shape of a matrix product: M, N, K of its reduction stage, and what its mma computes.
struct MmaShape {
  int64_t m = 0, n = 0, k = 0;
  int element_bytes = 2;                         // of the inputs: 2 (float16, bfloat16) or 4 (float32)
  tir::Precision precision = tir::Precision::kIEEE;  // of a float32 product: tf32 or 3xtf32
  bool matrix_form = false;  // the product is a contraction to rewrite first (tir matrix_form)
  bool b_read_along_k = false;  // B's operand is contiguous along K (its last index moves with K only)
  int64_t step() const { return element_bytes == 2 ? 16 : 8; }  // the depth of one mma
};
// The product's shape when the workload of `fresh` is one tensor cores take (16-bit inputs and
// output, or a float32 product at tf32 or 3xtf32 precision; a sum of products of two operands that
// matrix axes fit: tir/analysis/matrix_axes.h), else why not.
Result<MmaShape> TensorCoreShape(const tir::Schedule& fresh, const SketchRoles& roles);
// The shape the tiling covers: M and N as they are when multiples of 64, else rounded up to whole
// mma tiles (16 rows, 8 columns) when below 64, else to multiples of 64; K as it is when a multiple
// of the step, else rounded up to a multiple of 32 (pad_einsum: the operands are read zero-padded and
// the padding of the output is computed, never stored).
MmaShape PaddedShape(const MmaShape& s);
// Shared-memory bytes of one chunk of the copies for a bm x bn block tile and bk-deep chunk, rows
// padded as the schedule lays them out (CooperativeFetch's storage alignment).
int64_t ChunkSharedBytes(const MmaShape& s, int64_t bm, int64_t bn, int64_t bk);

// Applies the tiling to a fresh schedule whose roles are `roles` and product shape `shape`
// (TensorCoreShape's).
Result<void> ApplyTensorCoreTiling(tir::Schedule& sch, const SketchRoles& roles, const MmaShape& shape,
                                   const TensorCoreFactors& f);

// The same with fixed numbers, on a fresh schedule of `workload` (tests, examples).
struct TensorCoreTiling {
  int64_t warps_m = 2, warps_n = 2, tiles_m = 2, tiles_n = 4, k_steps = 2, stages = 2;
  bool b_n_rows = false;  // a matrix form's B copied into [n][k] rows
  int64_t block_group = 1;  // block rows consecutive blocks walk down before the next column
};
Result<tir::Schedule> TensorCoreSchedule(const tir::Workload& workload, const TensorCoreTiling& tiling);

}  // namespace autotune::search
