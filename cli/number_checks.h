// Checks of option values that CLI11's own validators let through: NaN passes CLI::Range (every comparison
// with NaN is false) and "-1" converts to a huge unsigned. Every floating-point option uses FiniteRange.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <sstream>
#include <string>

namespace autotune::cli {

// CLI::Range for a double that also refuses nan and inf; its --help text is Range's.
class FiniteRange : public CLI::Validator {
 public:
  FiniteRange(double lo, double hi) {
    std::ostringstream desc;
    desc << "FLOAT in [" << lo << " - " << hi << "]";
    description(desc.str());
    func_ = [lo, hi](std::string& input) -> std::string {
      double v = 0;
      if (!CLI::detail::lexical_cast(input, v)) return "Value " + input + " is not a number";
      if (!std::isfinite(v)) return "Value " + input + " is not a finite number";
      // Written so that no NaN can slip through a false comparison.
      if (!(v >= lo && v <= hi)) return "Value " + input + " not in range " + Text(lo) + " to " + Text(hi);
      return {};
    };
  }

 private:
  static std::string Text(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }
};

// For an unsigned option such as --seed: CLI11 would wrap "-1" to 2^64-1 without a word.
inline CLI::Validator NotNegative() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        const size_t first = input.find_first_not_of(" \t");
        if (first != std::string::npos && input[first] == '-') return "Value " + input + " is negative";
        return {};
      },
      "");
}

// For a list option whose empty value would silently mean "not given".
inline CLI::Validator NotEmpty() {
  return CLI::Validator(
      [](std::string& input) -> std::string { return input.empty() ? "an empty value is not allowed" : ""; }, "");
}

}  // namespace autotune::cli
