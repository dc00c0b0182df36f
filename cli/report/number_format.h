// How the report writes its figures, in the table, the section lines and the chart labels: enough
// digits to compare workloads, no more, and "—" where there is no value (no valid record, no span).
#pragma once

#include <optional>
#include <string>

namespace autotune::cli::report {

inline constexpr const char* kNoValue = "—";

// At least 4 significant digits, never exponent notation: "0.01235", "53.70", "20500.4".
std::string FormatSignificant(double value, int digits = 4, int min_decimals = 0);
std::string FormatMs(const std::optional<double>& ms);          // "0.02946", "53.70", "12346"
std::string FormatGflops(const std::optional<double>& gflops);  // "20500.4", "4307.2", "0.5243"

}  // namespace autotune::cli::report
