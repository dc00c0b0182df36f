// What CUDA code generation produces for one lowered function: one CUDA C++ translation unit with
// one or more kernels, launched in order, and how to launch them.
//
// Every kernel takes the same pointer parameters, in this order: the PrimFunc params (inputs, then
// the output), then one pointer per global workspace (an intermediate stage computed at root, e.g.
// padding that a schedule did not inline, or the partial sums of rfactor). The runner allocates the
// workspaces.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace autotune::tir {

struct CudaKernelLaunch {
  std::string entry;  // extern "C" symbol
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t dynamic_shared_bytes = 0;  // > 0 when the kernel's shared memory is above the 48 KB static limit
};

struct CudaModule {
  std::string code;
  std::vector<CudaKernelLaunch> kernels;
  int num_params = 0;                    // PrimFunc params
  std::vector<int64_t> workspace_bytes;  // one per workspace pointer, after the params
};

}  // namespace autotune::tir
