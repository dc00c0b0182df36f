// The cuda side of the lookup library's runtime (db/lookup/kernel_runtime.h): the kernel compiled by
// NVRTC for the current device (the CUDA context current on the calling thread, as PyTorch leaves
// it; else device 0's primary context), the cubin cached on disk, its workspaces allocated once.
#pragma once

#include <memory>

#include "db/lookup/kernel_runtime.h"

namespace autotune::db {

Result<std::unique_ptr<KernelModule>> LoadCudaKernelModule(const KernelSource& kernel);

}  // namespace autotune::db
