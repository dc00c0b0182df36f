// C builder (cpu target): C codegen, then the system C compiler into a shared object, several
// candidates at once. Objects are cached by SHA-256 of (compiler, host CPU, flags, source), so a
// candidate seen before is not compiled again.
//
// Flags: -O3 -march=native -fopenmp -fPIC -shared -std=c11 -fno-math-errno -ffp-contract=fast.
// ISO C mode turns FMA contraction off by default; we turn it back on because kernels should be
// as fast as the hardware allows and the check tolerance (1e-4 relative) absorbs the rounding
// difference, as it does for CUDA, which contracts by default. -fno-math-errno lets calls like
// expf vectorize (kernels never read errno). No -ffast-math: NaN checks and the order of
// reductions must stay as written.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "measure/builder.h"
#include "measure/compile_slots.h"
#include "measure/measure_config.h"

namespace autotune::measure {

class CBuilder : public Builder {
 public:
  explicit CBuilder(MeasureConfig config);
  std::vector<BuildResult> Build(const std::vector<BuildInput>& inputs, const OnBuilt& on_built = {}) override;

  const std::string& CacheDir() const { return cache_dir_; }

 private:
  BuildResult BuildOne(const BuildInput& input) const;

  MeasureConfig config_;
  CompileSlots slots_;  // config.build_threads compilers, shared by concurrent Build calls
  std::string cache_dir_;
  std::vector<std::string> command_;
  std::string identity_;  // compiler version and host CPU: part of every cache key
};

std::unique_ptr<Builder> MakeCBuilder(const MeasureConfig& config);

// The C source of an input, generated from its lowered function (GPU schedules serialized) or given:
// a result with source, entry and num_params, or with the error (kInvalidSchedule, kBuildError). What
// CBuilder compiles, and what a job sends to a remote worker.
BuildResult GenerateC(const BuildInput& input);

}  // namespace autotune::measure
