#include "cli/measure_options.h"

#include <fmt/format.h>

#include "cli/cli_error.h"
#include "cli/number_checks.h"
#include "measure/c_builder.h"
#include "measure/cpu_isa.h"
#include "measure/cpu_runner.h"
#include "measure/cuda_runner.h"
#include "measure/host_load.h"
#include "measure/nvrtc_builder.h"
#include "measure/nvrtc_compiler.h"
#include "search/measure_record.h"

namespace autotune::cli {

void AddMeasureOptions(CLI::App& cmd, measure::MeasureConfig& c) {
  cmd.add_option("--repeats", c.repeats, "timed repeats per candidate; the median is the figure")
      ->check(CLI::Range(1, 1000));
  cmd.add_option("--min-repeat-ms", c.min_repeat_ms, "each repeat runs the kernel at least this long")
      ->check(FiniteRange(0.0, 60000.0));
  cmd.add_option("--warmup", c.warmup, "untimed runs before timing")->check(CLI::Range(0, 1000));
  cmd.add_option("--threads", c.num_threads, "CPU threads of the kernel (0: all cores)")->check(CLI::Range(0, 4096));
  cmd.add_option("--build-timeout", c.build_timeout_s,
                 fmt::format("seconds allowed to compile a candidate, on cuda CPU seconds of the compiler (default: "
                             "60; tune on cuda: {:g})",
                             kCudaTuneBuildTimeoutS))
      ->check(FiniteRange(1.0, 3600.0));
  cmd.add_option("--run-timeout", c.run_timeout_s, "seconds allowed to check and time a candidate")
      ->check(FiniteRange(1.0, 3600.0));
  cmd.add_option("--arch", c.cuda_arch, "cuda: GPU architecture to compile for (default: the GPU's, e.g. sm_90)");
  cmd.add_option("--device", c.cuda_device, "cuda: GPU ordinal")->check(CLI::Range(0, 64));
  // One value per use, so that options starting with '-' are written --nvrtc-option=--Ofast-compile=min.
  cmd.add_option("--nvrtc-option", c.nvrtc_options,
                 "cuda: an extra NVRTC option, e.g. --nvrtc-option=--Ofast-compile=min (repeat for several; part "
                 "of the cubin cache key)")
      ->allow_extra_args(false)
      ->take_all();
}

void WarnIfHostBusy(const MeasureTarget& target, const measure::MeasureConfig& config) {
  if (target.kind != tir::TargetKind::kCpu) return;
  if (auto warning = measure::BusyHostWarning(config.num_threads)) fmt::print(stderr, "{}\n", *warning);
}

MeasureTarget ResolveMeasureTarget(const std::string& requested, const measure::MeasureConfig& config) {
  MeasureTarget t;
  if (requested == "cpu") {
    if (auto isa = measure::ResolveCpuIsa(config.cpu_isa); !isa) throw UserError{isa.error().message};
    t.info = search::CpuTargetInfo(config);
    return t;
  }
  auto device = measure::QueryCudaDeviceIsolated(config.cuda_device);
  Result<const measure::Nvrtc*> nvrtc = device ? measure::LoadNvrtc() : Result<const measure::Nvrtc*>(device.error());
  if (device && nvrtc) {
    fmt::print(stderr, "autotune: GPU {}\n", device->Describe());
    t.kind = tir::TargetKind::kCuda;
    t.info = search::CudaTargetInfo(*device, (*nvrtc)->VersionText());
    return t;
  }
  const std::string why = device ? nvrtc.error().message : device.error().message;
  if (requested == "cuda") throw UserError{fmt::format("the cuda target cannot run here: {}", why)};
  fmt::print(stderr, "autotune: no usable GPU ({}); using the cpu\n", why);
  t.info = search::CpuTargetInfo(config);
  return t;
}

std::unique_ptr<measure::Builder> MakeBuilder(tir::TargetKind target, const measure::MeasureConfig& config) {
  return target == tir::TargetKind::kCuda ? measure::MakeNvrtcBuilder(config) : measure::MakeCBuilder(config);
}

std::unique_ptr<measure::Runner> MakeRunner(tir::TargetKind target, const measure::MeasureConfig& config) {
  return target == tir::TargetKind::kCuda ? measure::MakeCudaRunner(config) : measure::MakeCpuRunner(config);
}

}  // namespace autotune::cli
