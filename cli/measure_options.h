// The measurement options every measuring command takes (measure, tune): repeats, timing, time limits,
// CPU threads and the GPU to use, filled into a MeasureConfig.
#pragma once

#include <CLI/CLI.hpp>

#include "measure/measure_config.h"

namespace autotune::cli {

void AddMeasureOptions(CLI::App& cmd, measure::MeasureConfig& config);

}  // namespace autotune::cli
