#include "measure/reference_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "support/parallel_for.h"

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

namespace {

CheckResult CheckRange(const float* out, const float* ref, int64_t begin, int64_t end, double scale, double rtol) {
  CheckResult r;
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t i = begin; i < end; ++i) {
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

}  // namespace

CheckResult CheckOutput(const float* out, const float* ref, int64_t n, double scale, double rtol) {
  // Large outputs (a 4096^2 gemm: 16 Mi elements, tens of ms on one core, for every candidate) are
  // checked in slices on several threads; the result is the same as one pass in order.
  constexpr int64_t kSlice = int64_t{1} << 20;
  const int64_t slices = std::min<int64_t>((n + kSlice - 1) / kSlice,
                                           int64_t{UsableCores()});
  if (slices <= 1) return CheckRange(out, ref, 0, n, scale, rtol);
  std::vector<CheckResult> parts(static_cast<size_t>(slices));
  const int64_t per = (n + slices - 1) / slices;
  ParallelFor(static_cast<int>(slices), parts.size(), [&](size_t s) {
    const int64_t begin = static_cast<int64_t>(s) * per;
    parts[s] = CheckRange(out, ref, begin, std::min(n, begin + per), scale, rtol);
  });
  CheckResult r = parts[0];
  for (size_t s = 1; s < parts.size(); ++s) {
    const CheckResult& p = parts[s];
    // The worst mismatch over all slices, the first of equals (slices are in index order).
    if (p.mismatches > 0 && (r.mismatches == 0 || p.max_rel_error > r.max_rel_error)) {
      r.worst_index = p.worst_index;
      r.got = p.got;
      r.expected = p.expected;
    }
    r.mismatches += p.mismatches;
    r.max_rel_error = std::max(r.max_rel_error, p.max_rel_error);
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

double OutputTolerance(double rtol, tir::DType dtype, ReferenceRounding reference) {
  double unit_roundoff = 0;
  if (dtype == tir::DType::kFloat16) unit_roundoff = 0x1p-11;
  if (dtype == tir::DType::kBFloat16) unit_roundoff = 0x1p-8;
  const int roundings = reference == ReferenceRounding::kOutputType ? 2 : 1;
  return rtol + roundings * unit_roundoff;
}

double PrecisionTolerance(tir::Precision precision) { return precision == tir::Precision::kTF32 ? 0x1p-11 : 0.0; }

}  // namespace autotune::measure
