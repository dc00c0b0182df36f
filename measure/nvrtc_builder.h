// NVRTC builder (cuda target): for each lowered function, the GPU validity check (an invalid program
// is INVALID_SCHEDULE with the reason, and NVRTC never sees it), CUDA codegen, then NVRTC into a
// cubin for the target architecture, several candidates at once.
//
// The architecture is config.cuda_arch, or else read from GPU config.cuda_device (in a child
// process: this process never initializes CUDA); with neither, every build fails saying to pass
// --arch. Options: see NvrtcOptions (measure/nvrtc_compiler.h).
//
// Each compile runs in a forked child process killed past config.build_timeout_s (BUILD_TIMEOUT):
// an NVRTC call cannot be interrupted in its thread. A compile error is a BUILD_ERROR with NVRTC's
// log, trimmed. Registers and spills come from ptxas's report in the log.
//
// Cubins are cached by SHA-256 of (NVRTC version, options, source) in the cache dir
// (config.cache_dir, else measure::DefaultCacheDir("cuda")): <key>.cubin, with <key>.log (the
// log, read back on a hit for the ptxas figures) and <key>.cu (the source, for people reading the
// cache). Files are written under temporary names and renamed, so concurrent builders never see a
// half-written cubin.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "measure/builder.h"
#include "measure/compile_slots.h"
#include "measure/cuda_driver.h"
#include "measure/measure_config.h"
#include "tir/analysis/gpu_validity.h"
#include "support/result.h"

namespace autotune::measure {

struct Nvrtc;

class NvrtcBuilder : public Builder {
 public:
  explicit NvrtcBuilder(MeasureConfig config);
  std::vector<BuildResult> Build(const std::vector<BuildInput>& inputs, const OnBuilt& on_built = {}) override;

  const std::string& CacheDir() const { return cache_dir_; }
  // The architecture the kernels are compiled for ("sm_90"), or why there is none. Until it is known
  // (once per builder), asking may query the GPU in a child process.
  Result<std::string> Arch();
  // The NVRTC options, or why NVRTC cannot be used (not found, no architecture).
  Result<std::vector<std::string>> Options();

 private:
  struct Setup {
    const Nvrtc* nvrtc = nullptr;
    std::string arch;
    std::vector<std::string> options;
    std::string identity;  // NVRTC version and options: the cache key's prefix
    std::optional<CudaDeviceInfo> device;  // when the architecture was read from the GPU
  };
  // Loads NVRTC and settles the architecture, once.
  const Result<Setup>& Prepare();
  BuildResult BuildOne(const BuildInput& input, const Setup& setup) const;

  MeasureConfig config_;
  CompileSlots slots_;  // config.build_threads compilers, shared by concurrent Build calls
  std::string cache_dir_;
  std::mutex mu_;
  std::optional<Result<Setup>> setup_;
};

std::unique_ptr<Builder> MakeNvrtcBuilder(const MeasureConfig& config);

// The CUDA module of an input, generated from its lowered function (after the validity check
// against `limits`) or given: a result with source, kernels, entry, num_params and workspaces, or
// with the error (kInvalidSchedule, kBuildError). What NvrtcBuilder compiles, and what a job sends to
// a remote worker.
BuildResult GenerateCuda(const BuildInput& input, const tir::GpuLimits& limits);

}  // namespace autotune::measure
