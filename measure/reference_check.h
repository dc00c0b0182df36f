// Compares a kernel's output with the reference output.
//
// Rule: element i matches when |out_i - ref_i| <= rtol * max(|ref_i|, scale), where scale is the
// mean |ref| over the whole output. A pure relative error explodes on outputs that are near zero
// by cancellation (a sum of K random-signed products), where float32 accumulation in a different
// order is legitimately off by about eps * (magnitude of the terms); the mean output magnitude is
// a stand-in for that magnitude, so such elements are judged against it. The reported relative
// error is max_i |out_i - ref_i| / max(|ref_i|, scale). A NaN or infinite output where the
// reference is finite (the output is poisoned with NaN, so also every unwritten element) is a
// mismatch with infinite error.
#pragma once

#include <cstdint>
#include <string>

#include "tir/dtype.h"
#include "tir/ops/precision.h"

namespace autotune::measure {

struct CheckResult {
  bool correct = true;
  double max_rel_error = 0;
  int64_t mismatches = 0;
  int64_t worst_index = -1;  // index of the worst element (the first of equals) when !correct
  float got = 0, expected = 0;  // at that index
  std::string Describe(int64_t num_elements) const;
};

// Mean |ref| (at least the smallest normal float, so that an all-zero reference still divides).
double ReferenceScale(const float* ref, int64_t n);

CheckResult CheckOutput(const float* out, const float* ref, int64_t n, double scale, double rtol);

// Whether the reference output was rounded into the output's type (the CUDA executor's reference
// kernel writes the workload's output type) or kept in float32 (the host reference).
enum class ReferenceRounding { kFloat32, kOutputType };

// The rtol for an output of `dtype`: the float32 one (accumulation order) plus the unit roundoff of
// the output's type (2^-11 for float16, 2^-8 for bfloat16) once for the kernel's rounding of its
// float32 result, and once more when the reference was rounded too.
double OutputTolerance(double rtol, tir::DType dtype, ReferenceRounding reference = ReferenceRounding::kFloat32);

// What a precision adds to the rtol. tf32: TF32's unit roundoff (2^-11). The reference multiplies
// the same TF32-rounded inputs, so what is left is the sum, and tensor cores sum a step's products
// and the accumulator with truncation: measured on an H100, gemm K=4096 is 4.5e-5 off that
// reference, and the error grows with K (2^-11 allows about 40,000). ieee and 3xtf32: nothing
// (3xtf32 kernels add each step's partial sum in float32).
double PrecisionTolerance(tir::Precision precision);

}  // namespace autotune::measure
