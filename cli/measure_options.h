// What the measuring commands (measure, tune) share: the measurement flags filled into a
// MeasureConfig, the target resolved to something this machine can measure (with how the database
// names it), and the builder and runner of that target.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "db/target.h"
#include "measure/builder.h"
#include "measure/measure_config.h"
#include "measure/runner.h"
#include "tir/target.h"

namespace autotune::cli {

void AddMeasureOptions(CLI::App& cmd, measure::MeasureConfig& config);

// The tuner's compile limit per candidate on the cuda target when --build-timeout is not given
// (MeasureConfig's 60 s stays for the cpu target and for `autotune measure`). A batch is measured
// only when its slowest compile is done, and a deep unroll of a large tile can keep NVRTC busy for
// 20-40 s. Of the ~4000 H200 suite records within 10% of their workload's best, one took more than
// 6 s to compile (none within 5%), while a round of the batch-16 convolutions waited on such
// stragglers (102 of 1248 candidates of one layer) at the old 10 s limit.
constexpr double kCudaTuneBuildTimeoutS = 6;
// Tuning screens slow candidates (measure/repeat_screen.h): the best ones keep all their repeats.
constexpr double kTuneScreenRatio = 1.5;

struct MeasureTarget {
  tir::TargetKind kind = tir::TargetKind::kCpu;
  db::TargetInfo info;
};

// "cpu", "cuda" or "auto" (cuda when a GPU and NVRTC are usable, else cpu, saying why on stderr).
// "cuda" where it cannot run is a UserError naming the reason.
MeasureTarget ResolveMeasureTarget(const std::string& requested, const measure::MeasureConfig& config);

// On the cpu target, one line on stderr when other processes keep busy the cores the kernels need.
void WarnIfHostBusy(const MeasureTarget& target, const measure::MeasureConfig& config);

std::unique_ptr<measure::Builder> MakeBuilder(tir::TargetKind target, const measure::MeasureConfig& config);
std::unique_ptr<measure::Runner> MakeRunner(tir::TargetKind target, const measure::MeasureConfig& config);

}  // namespace autotune::cli
