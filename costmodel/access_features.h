// Memory access analysis of a lowered program, for the cost model: every BufferLoad and BufferStore
// is weighted by the trip counts of the loops around it (as the program counts are) and summarized
// per memory scope and direction, with the coalescing of global requests and the bank conflicts of
// shared requests.
//
// A warp request is modelled as 32 consecutive linear thread ids (threadIdx.x first, then y and z)
// with every other loop variable at its loop's minimum; when the innermost loop around the access is
// vectorized, its elements belong to the same request (one wide access per lane; up to 128 points,
// so at most 4 elements per lane in a full warp). Lanes whose guards (enclosing ifs, select
// conditions) are false at that point take no part; a conjunct of a guard that is false for every
// lane is ignored, since it is false only because of where the other loops were fixed. Index
// expressions are evaluated at those points, which handles the floordiv/floormod of fused loops
// exactly. Codegen's own vectorization rules (float2/float4 only, a bare store body) are not
// repeated here: a vectorized loop counts as one wide request either way.
#pragma once

#include "tir/prim_func.h"

namespace autotune::costmodel {

// A trip-count weighted mean.
struct WeightedMean {
  double sum = 0, weight = 0;
  void Add(double x, double w) {
    sum += x * w;
    weight += w;
  }
  double Get() const { return weight > 0 ? sum / weight : 0.0; }
};

// The accesses of one scope in one direction (loads or stores).
struct AccessGroup {
  double bytes = 0;  // moved: trip-count weighted, over the whole launch
  // Footprint over the whole launch: per buffer instance (an instance per run of its allocation:
  // per block for shared, per thread for local, one for global), the product of the extents of the
  // loops inside the allocation that the index depends on, capped by the buffer's size, times the
  // number of instances; the largest over the accesses of a buffer, summed over buffers.
  double unique_bytes = 0;
  // log2(1 + |stride|) where the stride (in elements) is that of the innermost loop around the
  // access that the index depends on (0 when it depends on none), averaged over accesses.
  WeightedMean log_stride;

  double Reuse() const { return unique_bytes > 0 ? bytes / unique_bytes : 0.0; }
};

struct AccessFeatures {
  AccessGroup group[3][2];  // [tir::Scope][0: loads, 1: stores]
  // Global memory: sectors per warp request, and the fraction of the fetched sector bytes that the
  // request asked for, averaged over accesses; [0: loads, 1: stores].
  WeightedMean sectors_per_request[2];
  WeightedMean sector_efficiency[2];
  double global_sectors = 0;  // total over the launch, loads and stores
  // Shared memory: the bank-conflict degree of a warp request, averaged; [0: loads, 1: stores].
  WeightedMean bank_conflict[2];
};

AccessFeatures AnalyzeAccesses(const tir::PrimFunc& lowered);

}  // namespace autotune::costmodel
