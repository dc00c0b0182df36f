// C builder (cpu target): C codegen, then the system C compiler into a shared object, several
// candidates at once (measure/c_compile.h: the flags, and the cache by SHA-256 of compiler, host
// CPU, flags and source, so a candidate seen before is not compiled again).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "measure/builder.h"
#include "measure/c_compile.h"
#include "measure/compile_slots.h"
#include "measure/measure_config.h"

namespace autotune::measure {

class CBuilder : public Builder {
 public:
  explicit CBuilder(MeasureConfig config);
  std::vector<BuildResult> Build(const std::vector<BuildInput>& inputs, const OnBuilt& on_built = {}) override;

  const std::string& CacheDir() const { return compiler_.cache_dir(); }

 private:
  BuildResult BuildOne(const BuildInput& input) const;

  MeasureConfig config_;
  CompileSlots slots_;  // config.build_threads compilers, shared by concurrent Build calls
  CCompiler compiler_;
};

std::unique_ptr<Builder> MakeCBuilder(const MeasureConfig& config);

// The C source of an input, generated from its lowered function (GPU schedules serialized) or given:
// a result with source, entry and num_params, or with the error (kInvalidSchedule, kBuildError). What
// CBuilder compiles, and what a job sends to a remote worker.
BuildResult GenerateC(const BuildInput& input);

}  // namespace autotune::measure
