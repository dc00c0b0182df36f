// What a lookup hands to another compiler: the generated source of one scheduled workload and how to
// launch it. Produced by the same lowering and codegen that measurement uses, so the kernel returned
// is the kernel that was measured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tir/codegen/cuda_module.h"
#include "tir/ops/workload.h"
#include "support/result.h"
#include "tir/schedule/schedule.h"

namespace autotune::db {

// An input a c kernel takes packed (tir/packed_layout.h): `entry(tensor, packed)`, a function of the
// same source, makes it from the workload's tensor `param`: `shape` (row-major), `bytes` in all.
struct KernelPack {
  int param = 0;
  std::string entry;
  std::vector<int64_t> shape;
  int64_t bytes = 0;
};

struct KernelSource {
  std::string language;  // "cuda" (CUDA C++ for NVRTC/nvcc) or "c" (C11 for the system compiler)
  std::string code;
  // cuda: the kernels to launch, in order. c: one entry whose grid and block are {1,1,1}.
  std::vector<tir::CudaKernelLaunch> launches;
  int num_params = 0;                    // pointer params: the inputs, then the outputs
  std::vector<int64_t> workspace_bytes;  // cuda: global scratch buffers passed after the params
  std::vector<KernelPack> packs;         // c: inputs the entry takes packed, made once by their pack functions
};

// The entry-point name of a workload's kernels: "autotune_<op>_<first 12 hex digits of its key>",
// distinct per workload so that sources of several lookups can share one translation unit.
std::string KernelEntryName(const tir::Workload& workload);

// Lowers the scheduled workload and generates its source. For cuda the GPU validity check runs first
// (a trace replayed on another shape can exceed the limits). Errors are values.
Result<KernelSource> GenerateKernelSource(const tir::Schedule& schedule);

}  // namespace autotune::db
