// Where a kernel's outputs lie in the one buffer a runner allocates for them. Most workloads have one
// output; add_rms_norm writes its sum too (tir::Workload::side_outputs). Each output starts on a
// 256-byte boundary, the alignment kernels may assume of every tensor (CUDA's allocations, the C
// kernels' 64 bytes); for the check they are laid side by side, as the workload's reference writes them.
#pragma once

#include <cstdint>
#include <vector>

#include "tir/dtype.h"
#include "tir/ops/workload.h"

namespace autotune::measure {

struct OutputLayout {
  std::vector<int64_t> counts;   // elements of each output, in argument order
  std::vector<int64_t> offsets;  // where each starts in the buffer, in elements
  int64_t buffer_elements = 0;   // the buffer's elements, padding included
  int64_t total = 0;             // the outputs' elements, without padding

  static OutputLayout Of(const std::vector<int64_t>& counts, tir::DType dtype);
  static OutputLayout Of(const tir::Workload& w);  // its Outputs()
  // Moves the outputs in `buffer` (as float32 values, buffer_elements of them) to its first `total`
  // elements, one after the other.
  void Compact(float* buffer) const;
};

}  // namespace autotune::measure
