#include "cli/report/number_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace autotune::cli::report {

std::string FormatSignificant(double value, int digits, int min_decimals) {
  const double magnitude = std::abs(value);
  const int decimals = magnitude > 0 ? digits - 1 - static_cast<int>(std::floor(std::log10(magnitude))) : 0;
  return fmt::format("{:.{}f}", value, std::max(decimals, min_decimals));
}

std::string FormatMs(const std::optional<double>& ms) { return ms ? FormatSignificant(*ms) : kNoValue; }

// One decimal at least: throughputs of thousands read as "4307.2" next to each other in the table.
std::string FormatGflops(const std::optional<double>& gflops) {
  return gflops ? FormatSignificant(*gflops, 4, 1) : kNoValue;
}

}  // namespace autotune::cli::report
