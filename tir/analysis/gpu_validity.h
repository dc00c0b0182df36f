// GPU validity check: whether a lowered function fits the resource limits of a GPU, decided from
// the lowered TIR alone (no compilation), so the search can drop invalid candidates cheaply. The
// kernels are those CUDA codegen emits (PlanCudaModule, tir/codegen/cuda_kernels.h); every kernel is
// checked, and the usage reported is the largest over the kernels.
//
// Rules, in the order they are checked (the first violation is the error):
//  - threads per block (product of the threadIdx extents) <= max_threads_per_block, and each block
//    dimension <= max_block_dims; each grid dimension <= max_grid_dims;
//  - shared memory per block (the kernel's shared regions, with their 16-byte alignment padding; a
//    buffer's size honors its strides) <= max_shared_bytes_per_block (the opt-in maximum: kernels
//    above max_static_shared_bytes use dynamic shared memory);
//  - local arrays per thread (after vthread expansion) <= max_local_bytes_per_thread;
//  - estimated registers per thread <= the budget min(max_registers_per_thread,
//    max_registers_per_block / threads per block rounded up to a warp), which __launch_bounds__
//    imposes. The estimate is the 32-bit words of the local arrays (they live in registers once the
//    loops indexing them are unrolled) plus kRegisterOverhead for indices, addresses and operands;
//    above the budget the kernel would spill its accumulators, which is catastrophic;
//  - fully unrolled code size (statements, counted through the loops CUDA codegen fully unrolls,
//    CudaFullyUnrolls) <= max_unrolled_statements, which bounds compile time and instruction cache
//    pressure.
#pragma once

#include <array>
#include <cstdint>

#include "tir/prim_func.h"
#include "support/result.h"

namespace autotune::tir {

struct GpuLimits {
  int64_t max_threads_per_block = 1024;
  std::array<int64_t, 3> max_block_dims{1024, 1024, 64};
  std::array<int64_t, 3> max_grid_dims{2147483647, 65535, 65535};
  int64_t max_static_shared_bytes = 48 * 1024;
  int64_t max_shared_bytes_per_block = 227 * 1024;  // opt-in maximum of sm_90 (232448 bytes)
  int64_t max_registers_per_thread = 255;
  int64_t max_registers_per_block = 64 * 1024;  // 32-bit registers
  int64_t max_local_bytes_per_thread = 4096;    // local arrays after vthread expansion
  int64_t max_unrolled_statements = 32768;
};

// Registers added to the local arrays' words in the estimate.
inline constexpr int64_t kRegisterOverhead = 16;

// Resource usage of a lowered function: the largest over its kernels.
struct GpuUsage {
  int64_t threads_per_block = 0;
  int64_t shared_bytes = 0;
  int64_t local_bytes_per_thread = 0;
  int64_t estimated_registers = 0;
  int64_t unrolled_statements = 0;
  int kernels = 0;
};

// The usage, or the reason the function is invalid on a GPU with `limits`, e.g. "1536 threads per
// block exceed the limit of 1024" (prefixed with "kernel i: " in a module of several kernels).
Result<GpuUsage> CheckGpuValidity(const PrimFunc& lowered, const GpuLimits& limits = {});

}  // namespace autotune::tir
