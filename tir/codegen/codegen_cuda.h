// CUDA code generator: lowered TIR -> one CUDA C++ translation unit for NVRTC, with one or more
// `extern "C" __global__` kernels and their launch configurations (tir/codegen/cuda_module.h).
//
// Kernels and workspaces are planned by PlanCudaModule (tir/codegen/cuda_kernels.h): each top-level
// unit with thread-bound loops is a kernel, one without is a <<<1,1>>> kernel; global allocations
// are workspaces, passed after the params. Every kernel takes all params and workspaces, as
// `float* __restrict__` (`const float* __restrict__` where the kernel does not write the buffer),
// and is declared `__launch_bounds__(threads per block)`.
//
// What each construct becomes:
//  - blockIdx / threadIdx loops: `const int v = (int)threadIdx.x;` (plus the loop's min). A loop
//    whose extent is below the launch dimension of its axis (two sibling loops of one axis) is
//    guarded by `if (threadIdx.x < extent)`. Nested loops of one axis, a blockIdx loop inside a
//    threadIdx loop and vthread loops are errors.
//  - Code of a kernel outside the threadIdx loops of an axis whose dimension is > 1 (block-level
//    code) runs once per block: a statement there that writes shared or global memory is guarded by
//    `if (threadIdx.x == 0 ...)` (one writing only local arrays runs in every thread, each needing
//    its copy), and `__syncthreads()` separates consecutive block-level statements that conflict on
//    shared or global buffers (and ends a block-level loop whose body conflicts with itself). Such
//    code writing memory outside the blockIdx loops of an axis whose grid dimension is > 1 is an
//    error (blocks are not ordered); blocks are otherwise taken as independent, as in TVM.
//  - Allocate(shared): `__shared__ __align__(16)` arrays at the top of the kernel when its total is
//    at most 48 KB, else one `extern __shared__ __align__(16) unsigned char at_shared[]` carved at
//    16-byte-aligned offsets, and CudaKernelLaunch::dynamic_shared_bytes set. Allocate(local):
//    a local array where it is allocated.
//  - Barrier: `__syncthreads();`; an error under a thread-dependent condition or loop bound (one using
//    a threadIdx variable or a local value), dropped in code that one thread runs alone. With
//    async_wait = N >= 0 (pipelined copies, tir/lower/pipeline_copies.h) it is preceded by
//    `at_cp_async_wait<N>()`: cp.async.commit_group, then cp.async.wait_group N. The barriers code
//    generation adds between conflicting block-level statements leave async_fill buffers out: the
//    pipeline pass placed theirs.
//  - A store into an async_fill buffer (shared, pipelined) whose value is a plain float32 load
//    of a global buffer is an asynchronous copy, `at_cp_async_4/8/16(&dst, &src)` (cp.async; a plain
//    copy before sm_80): scalar, or one per vectorized loop that qualifies for a vector store. A
//    scalar store of `cond ? global[i] : 0.0f` there (a padded input's copy) is
//    `at_cp_async_4_or_zero(&dst, global, i, cond)`: cp.async that zero-fills where cond is false.
//  - Unrolling: we rely on `#pragma unroll` (no count) on loops with constant trip counts, which
//    NVRTC unrolls completely; it is put on every loop CudaFullyUnrolls says so: unrolled loops, and
//    rolled loops of extent <= 64 whose variable indexes a local array, so that local arrays are
//    indexed by constants only and stay in registers.
//  - Vectorized loops of extent 2 or 4 with min 0 whose body is one float32 store at index
//    `base + v` (the loop variable with coefficient 1), maybe under an `if` (no else) whose condition
//    does not use v (it then goes around the vector access): loads of global or shared float32 buffers
//    at `base' + v` with base' provably a multiple of the width become one float2/float4 load, and the
//    store one float2/float4 store when its buffer is global or shared and its base is provably
//    aligned; the other lanes' values are computed per lane. A base is provably a multiple of the
//    width when, in its linear form (sum of coefficient * term + constant, terms being variables or
//    non-linear subexpressions), every coefficient and the constant are multiples of it (params and
//    workspaces are 16-byte aligned, shared regions too). Loads inside a select's branches or the
//    right operand of && and || stay per lane: they run only when taken, and may be out of bounds
//    when not (a convolution's padding). A loop that reads the stored buffer at
//    another index, or where nothing is aligned, or any other vectorized loop, is a scalar loop with
//    `#pragma unroll`.
//  - A vectorized loop of 2, 4 or 8 16-bit elements copied between aligned places of shared or
//    global memory: one 4-, 8- or 16-byte access a side (cp.async into a pipelined copy); a
//    zero-padded copy whose bound holds for all lanes or none copies or zeroes the whole vector
//    (`at_cp_async_16_or_zero`: cp.async with a source size of 0 outside).
//  - Tensorized tiles (tir/analysis/tensor_intrinsics.h): run by every lane of every warp (block-level
//    code holding them is not given to one thread; blockDim.x must be 32, no tile inside a threadIdx.x
//    loop or a thread-dependent branch). Fragments are this lane's registers of each tile (`unsigned`
//    pairs of 16-bit elements, or floats); mma_m16n8k16 is one `mma.sync` (at_mma_m16n8k16_f16/bf16),
//    fill_16x8 four zero stores, load_a_16x16 / load_b_16x8 `ldmatrix.x4` / `ldmatrix.x2.trans` from
//    16-byte-aligned shared rows (else a load per element pair), store_16x8 the tile's statement once
//    per accumulator element of the lane. A fragment accessed outside a tile is an error.
//  - Parallel loops are serial loops; IfThenElse a plain if; int32 index arithmetic with
//    floordiv/floormod as shifts and masks (powers of two), / and % (dividend provably non-negative)
//    or helpers, as in C (tir/codegen/c_family.h), fminf/fmaxf, expf, ...
// Output is deterministic. CodegenCuda does not check resource limits (threads, shared memory,
// registers): that is CheckGpuValidity (tir/analysis/gpu_validity.h), which a builder calls first.
#pragma once

#include "tir/codegen/cuda_module.h"
#include "tir/prim_func.h"
#include "support/result.h"

namespace autotune::tir {

// Fails (as a value) on what it cannot generate: see PlanCudaModule, barriers under thread-dependent
// control, block-level writes outside the blockIdx loops, unflattened buffers, unknown intrinsics.
Result<CudaModule> CodegenCuda(const PrimFunc& f);

}  // namespace autotune::tir
