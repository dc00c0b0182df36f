// The job side's builder when candidates are measured on remote workers: it only generates code (C
// or CUDA source, launches, workspaces), which is cheap, and leaves compiling to the worker that runs
// the candidate, so a job machine needs no compiler, NVRTC or GPU. Its results have a source and no
// artifact; RemoteRunner sends them.
#pragma once

#include <memory>

#include "measure/builder.h"
#include "tir/target.h"

namespace autotune::measure::remote {

class CodegenBuilder final : public Builder {
 public:
  explicit CodegenBuilder(tir::TargetKind target) : target_(target) {}
  std::vector<BuildResult> Build(const std::vector<BuildInput>& inputs, const OnBuilt& on_built = {}) override;

 private:
  tir::TargetKind target_;
};

}  // namespace autotune::measure::remote
