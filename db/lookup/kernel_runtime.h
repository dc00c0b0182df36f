// Running a looked-up kernel in this process (the lookup library's runtime). A module is the kernel
// compiled once, as it was measured (cpu: the system C compiler with OpenMP and the tuner's flags,
// measure/c_compile.h; cuda: NVRTC for the current device's architecture with the tuner's options),
// the object cached on disk by content hash under $XDG_CACHE_HOME/autotune (size-capped,
// measure/build_cache.h), then launched with the caller's tensor pointers. Workspaces are the
// module's own, allocated at load. Errors are values, never aborts.
//
// What a kernel assumes of its pointers is what the tuner measured it with: each tensor contiguous,
// row-major, its start aligned to kKernelPointerAlignment bytes (the CPU runner allocates 64-byte
// aligned arrays; the GPU's allocations are 256-byte aligned, and vectorized CUDA kernels fault on
// a float4 access that is not 16-byte aligned). Launch refuses a pointer that is not aligned.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "db/lookup/kernel_source.h"
#include "support/result.h"

namespace autotune::db {

// cpu: 64 bytes (a cache line); cuda: 256 bytes (what cuMemAlloc and PyTorch's allocator give).
int64_t KernelPointerAlignment(const std::string& language);

// Checks the pointers of a launch: num_params of them (inputs, then the outputs), none null, each
// aligned to KernelPointerAlignment(language).
Result<void> CheckKernelArgs(void* const* args, int num_args, int num_params, const std::string& language);

class KernelModule {
 public:
  // Compiles (or finds in the cache) and loads `kernel`. Thread-safe.
  static Result<std::unique_ptr<KernelModule>> Load(const KernelSource& kernel);
  virtual ~KernelModule() = default;

  // Whether `args` are what Launch takes (CheckKernelArgs).
  Result<void> CheckArgs(void* const* args, int num_args) const {
    return CheckKernelArgs(args, num_args, num_params_, language_);
  }
  // Runs the kernel on `args` (checked first): its num_params tensors (inputs, then the outputs): host
  // pointers for cpu, device pointers for cuda, where it is enqueued on `stream` (a CUstream; null:
  // the default stream) and the call returns without waiting. Launches on one module must not
  // overlap in time (they share its workspaces); modules are independent.
  virtual Result<void> Launch(void* const* args, int num_args, void* stream) = 0;
  // For a kernel with packed inputs (KernelSource::packs), Launch packs them on every call; a client
  // whose weights do not change makes pack i's tensor once (Pack) and calls LaunchPacked with the
  // packed tensors in their inputs' places. Without packs LaunchPacked is Launch.
  virtual Result<void> Pack(int pack, const void* tensor, void* packed);
  virtual Result<void> LaunchPacked(void* const* args, int num_args, void* stream) { return Launch(args, num_args, stream); }
  // The compiler command or options the object was built with (as the tuner built it).
  const std::string& build_options() const { return build_options_; }

 protected:
  KernelModule(std::string language, int num_params) : language_(std::move(language)), num_params_(num_params) {}
  std::string language_;
  int num_params_;
  std::string build_options_;
};

}  // namespace autotune::db
