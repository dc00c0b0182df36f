#include "measure/reference_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace autotune::measure {

double ReferenceScale(const float* ref, int64_t n) {
  double sum = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(ref[i])) {
      sum += std::fabs(ref[i]);
      ++finite;
    }
  }
  const double mean = finite ? sum / finite : 0.0;
  return std::max(mean, static_cast<double>(std::numeric_limits<float>::min()));
}

CheckResult CheckOutput(const float* out, const float* ref, int64_t n, double scale, double rtol) {
  CheckResult r;
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const double o = out[i], e = ref[i];
    double err;
    if (std::isnan(e)) {
      err = std::isnan(o) ? 0.0 : inf;  // the reference itself is NaN (e.g. log of a negative)
    } else if (std::isinf(e)) {
      err = o == e ? 0.0 : inf;
    } else if (!std::isfinite(o)) {
      err = inf;
    } else {
      err = std::fabs(o - e) / std::max(std::fabs(e), scale);
    }
    if (err > rtol) {
      ++r.mismatches;
      if (r.worst_index < 0 || err > r.max_rel_error) {  // the worst element, the first of equals
        r.worst_index = i;
        r.got = out[i];
        r.expected = ref[i];
      }
    }
    r.max_rel_error = std::max(r.max_rel_error, err);
  }
  r.correct = r.mismatches == 0;
  return r;
}

std::string CheckResult::Describe(int64_t num_elements) const {
  if (correct) return fmt::format("max relative error {:.3g}", max_rel_error);
  return fmt::format("max relative error {:.3g}: {} of {} elements differ; element {} is {} (expected {}){}",
                     max_rel_error, mismatches, num_elements, worst_index, got, expected,
                     std::isnan(got) ? ", NaN or never written" : "");
}

}  // namespace autotune::measure
