// Program features of a lowered candidate (the same lowering that feeds code generation), as one
// fixed-length, named, versioned vector for the cost model. This first version (kFeatureVersion)
// aggregates over the whole program: every count is weighted by the trip counts of the loops around
// it (thread-bound loops included, so counts are totals over the launch), then log2(1 + x)
// compressed; the loop structure (grid, threads, unrolled and vectorized work) and allocation sizes
// are added as they are. Per-store and per-buffer access features (reuse, strides, coalescing, bank
// conflicts) are the next version.
#pragma once

#include <string>
#include <vector>

#include "tir/prim_func.h"

namespace autotune::costmodel {

// Changes whenever a feature is added, removed or computed differently: a model is only usable with
// the version it was trained with.
inline constexpr const char* kFeatureVersion = "v1-program-25";

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
};

ProgramCounts CountProgram(const tir::PrimFunc& lowered);

// The names of the features, in vector order (size fixed for kFeatureVersion).
const std::vector<std::string>& FeatureNames();
// The feature vector of a lowered program.
std::vector<float> ExtractFeatures(const tir::PrimFunc& lowered);

}  // namespace autotune::costmodel
