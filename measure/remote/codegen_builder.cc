#include "measure/remote/codegen_builder.h"

#include <chrono>

#include "measure/c_builder.h"
#include "measure/nvrtc_builder.h"
#include "tir/analysis/gpu_validity.h"

namespace autotune::measure::remote {

std::vector<BuildResult> CodegenBuilder::Build(const std::vector<BuildInput>& inputs, const OnBuilt& on_built) {
  std::vector<BuildResult> out;
  out.reserve(inputs.size());
  for (const auto& in : inputs) {
    const auto t0 = std::chrono::steady_clock::now();
    // The GPU limits are the architecture's defaults: the worker's device is not known here, and the
    // search checked the candidate against the same limits.
    BuildResult r = target_ == tir::TargetKind::kCuda ? GenerateCuda(in, tir::GpuLimits{}) : GenerateC(in);
    r.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.push_back(std::move(r));
    if (on_built) on_built(out.size() - 1, out.back());
  }
  return out;
}

}  // namespace autotune::measure::remote
