// Program features of a lowered candidate (the same lowering that feeds code generation), as one
// fixed-length, named, versioned vector for the cost model. Every count is weighted by the trip
// counts of the loops around it (thread-bound loops included, so counts are totals over the launch).
// Counts, bytes and sizes are log2(1 + x) compressed; averages and ratios are plain values.
//
// The vector, in order (FeatureNames() has one name per entry):
//   - program totals (version 1): arithmetic by kind, loads and stores per scope, global bytes,
//     barriers, grid and threads per block (largest kernel), unrolled and vectorized work, shared and
//     local allocation sizes, arithmetic intensity;
//   - launch: kernels, total threads (blocks x threads per block, summed over kernels), the fraction
//     of the launched warp lanes that hold a thread, global workspace bytes;
//   - per scope (global, shared, local) and direction (load, store): bytes moved, unique bytes,
//     reuse (bytes / unique bytes), mean log2(1 + stride) of the innermost dependent loop
//     (access_features.h defines them);
//   - global coalescing: sectors per warp request and sector efficiency for loads and for stores,
//     total sectors; shared memory: bank-conflict degree of loads and of stores;
//   - tensor cores (version 3): warp-level mma, fragment loads and accumulator stores (tensorized
//     tiles, each counted once per warp), the share of the arithmetic the mma do, mma per fragment
//     load (register reuse), and the deepest pipeline of shared copies (1: none). A tile's
//     description is counted in the totals above as well, as the scalar work it stands for;
//   - the element size of the kernel's floating-point parameters (the smallest: 2 for float16 and
//     bfloat16 workloads), so that a model learns that FMA code of a 16-bit product is far from its
//     workload's best (tensor cores) while the same code of a float32 one may be the best;
//   - (version 4) the bank-conflict degree of the ldmatrix loads of 16-bit fragments, averaged (0:
//     none; 1: conflict-free): their rows are padded apart in shared memory, or they conflict.
#pragma once

#include <string>
#include <vector>

#include "tir/lower/lower.h"
#include "tir/prim_func.h"

namespace autotune::costmodel {

// Changes whenever a feature is added, removed or computed differently: a model is only usable with
// the version it was trained with.
// v2: per-scope access features, coalescing, bank conflicts and launch shape appended to v1's 25;
// grid no longer multiplies the grids of consecutive kernels (a v1 bug, seen with split-K).
// v3: tensor-core features appended. v4: the ldmatrix bank conflicts appended.
inline constexpr const char* kFeatureVersion = "v4-ldmatrix-68";

// Raw totals of one lowered program (before the log compression).
struct ProgramCounts {
  double float_add = 0, float_mul = 0, float_div = 0, float_min_max = 0, float_compare = 0;
  double int_arith = 0, int_compare = 0, selects = 0, calls = 0, casts = 0;
  double global_loads = 0, shared_loads = 0, local_loads = 0;
  double global_stores = 0, shared_stores = 0, local_stores = 0;
  double global_bytes = 0;  // loaded and stored
  double barriers = 0;
  double grid = 1, threads_per_block = 1;  // largest over the kernels
  double unrolled_iterations = 0, vectorized_lanes = 0;
  double shared_bytes = 0, local_bytes = 0;  // allocated, per block / per thread
  double workspace_bytes = 0;                // global allocations (e.g. split-K partial sums)
  // Launch shape: kernels (a program without block-bound loops is one), threads summed over them,
  // and the warp lanes those threads occupy (blocks x threads rounded up to whole warps).
  double kernels = 0, total_threads = 0, warp_lanes = 0;
  // Tensorized tiles (warp-level intrinsics) by kind, the arithmetic of the mma tiles, and the most
  // slots a pipelined shared copy has.
  double mma = 0, fragment_loads = 0, fragment_stores = 0, mma_flops = 0;
  double pipeline_stages = 1;
  // ldmatrix loads (fragment loads of 16-bit elements) and the sum of their bank-conflict degrees.
  double ldmatrix = 0, ldmatrix_conflicts = 0;

  double Flops() const { return float_add + float_mul + float_div + float_min_max; }
};

ProgramCounts CountProgram(const tir::PrimFunc& lowered);

// The names of the features, in vector order (size fixed for kFeatureVersion).
const std::vector<std::string>& FeatureNames();
// The feature vector of a lowered program.
std::vector<float> ExtractFeatures(const tir::PrimFunc& lowered);

// The lowering the features are extracted from (and the search checks candidates on): the usual one
// without fragment pipelining, which lowering keeps only where it stays within the same register
// budget, so the features stay those of the programs the stored models were trained on.
tir::LowerOptions FeatureLowering();

}  // namespace autotune::costmodel
