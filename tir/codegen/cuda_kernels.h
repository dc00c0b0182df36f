// How a lowered function maps onto CUDA kernels. CUDA codegen and the GPU validity check both plan
// with this, so that the check sees exactly the kernels, launch dimensions, shared-memory layout and
// unrolled loops that codegen emits.
//
// Kernels: the body is cut at its top level (through Seq and Allocate nodes) into units, in order.
// A unit that contains thread-bound loops is one kernel; its grid (block) dimension of each axis is
// the largest extent of the blockIdx (threadIdx) loops of that axis. A unit without thread-bound
// loops is a kernel of one thread (<<<1,1>>>). Kernels are launched in order.
//
// Workspaces (global memory the runner allocates, passed as pointer params after the PrimFunc params,
// in order of appearance): every global-scope Allocate, and a shared or local Allocate at the top
// level whose body spans several units (its contents must outlive a launch). Their Allocate nodes are
// removed from the kernel bodies.
//
// Shared memory of a kernel: its shared-scope Allocates (one region per buffer, in order of
// appearance), each at an offset aligned to 16 bytes (so float4 accesses of aligned indices are
// aligned). Above kCudaStaticSharedBytes in total the kernel uses dynamic shared memory.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tir/prim_func.h"
#include "support/result.h"

namespace autotune::tir {

inline constexpr int64_t kCudaStaticSharedBytes = 48 * 1024;  // static __shared__ limit of a kernel
inline constexpr int64_t kCudaSharedAlign = 16;
// A rolled (serial) loop of constant extent up to this, whose variable indexes a local array in its
// body, is fully unrolled so that the array can live in registers.
inline constexpr int64_t kCudaRegisterLoopMaxExtent = 64;

struct CudaKernelPlan {
  Stmt body;                      // without workspace allocations
  bool has_thread_loops = false;  // false: a <<<1,1>>> kernel
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  std::vector<Buffer> shared;           // shared buffers, in order of appearance
  std::vector<int64_t> shared_offsets;  // byte offset of each, aligned to kCudaSharedAlign
  int64_t shared_bytes = 0;             // total, alignment padding included

  int64_t ThreadsPerBlock() const { return block[0] * block[1] * block[2]; }
  bool DynamicShared() const { return shared_bytes > kCudaStaticSharedBytes; }
};

struct CudaModulePlan {
  std::vector<CudaKernelPlan> kernels;
  std::vector<Buffer> workspaces;
  std::vector<int64_t> workspace_bytes;
};

// Fails (as a value) on what has no CUDA form: a vthread loop left after lowering, a non-constant
// thread extent, a loop nested in a loop bound to the same thread axis, a blockIdx loop inside a
// threadIdx loop, an allocation that is not flat with a constant size.
Result<CudaModulePlan> PlanCudaModule(const PrimFunc& f);

// Whether CUDA codegen fully unrolls a loop (so every statement in it is repeated extent times):
// loops of constant extent > 1 that are unrolled (ForKind::kUnrolled) or vectorized, and serial or
// parallel ones of extent <= kCudaRegisterLoopMaxExtent whose variable is used in an index of a
// local-scope buffer access in the loop body.
bool CudaFullyUnrolls(const ForNode* loop);

}  // namespace autotune::tir
