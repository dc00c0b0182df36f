// How a float32 product is computed (--precision). ieee: float32 multiplies (FMA code); tf32: both
// factors rounded to TF32 (10-bit mantissa, the tensor cores' input) and multiplied exactly; 3xtf32:
// each factor split into a TF32 high part and a TF32 low part (x - high), and the product taken as
// lo(a) hi(b) + hi(a) lo(b) + hi(a) hi(b): three TF32 tensor-core products, close to float32's accuracy.
// The compute definition holds that arithmetic, so every schedule (and the C path) computes it and a
// tensor intrinsic matches it exactly (tir/analysis/tensor_intrinsics.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.h"
#include "tir/dtype.h"
#include "tir/expr.h"

namespace autotune::tir {

enum class Precision : uint8_t { kIEEE, kTF32, kSplitTF32 };
const char* PrecisionName(Precision p);  // "ieee", "tf32", "3xtf32"
std::optional<Precision> ParsePrecision(std::string_view name);

// A workload's number type: its tensors' element type and how its products are computed. Its name
// is the element type's, or the precision's when that is not ieee ("tf32", "3xtf32": float32
// tensors); that name is the workload's "dtype" in keys, task files, records and lookups.
struct NumberType {
  DType element = DType::kFloat32;
  Precision precision = Precision::kIEEE;
  std::string Name() const;
};
// "float32", "float16", "bfloat16", "tf32" or "3xtf32"; else an error naming them.
Result<NumberType> ParseNumberType(const std::string& name);
// The number type of --dtype and --precision together ("float32" + "tf32" -> tf32); an error when
// a precision other than ieee goes with a 16-bit type.
Result<NumberType> CombineNumberType(const std::string& dtype, const std::string& precision);

// x rounded to the nearest TF32 value, ties away from zero (PTX cvt.rna.tf32.f32): a float32 with
// the low 13 mantissa bits zero. Codegen: the C backend rounds the bits, CUDA uses cvt.rna.
inline constexpr const char* kRoundTF32 = "round_tf32";
Expr RoundTF32(Expr x);
// a * b (float32 values) at precision p, as described at the top.
Expr ProductAt(Expr a, Expr b, Precision p);

// The float32 value of x rounded to TF32 as cvt.rna does (NaN and infinity kept).
float RoundToTF32(float x);

// A workload's reference at precision p, from the ieee one (float64 sums of its inputs): for tf32
// the first factor_elements.size() inputs (the factors, of those sizes) are rounded to TF32 first,
// so the check sees only the accumulation's error; ieee and 3xtf32 (float32's accuracy) keep it.
using Reference = std::function<void(const std::vector<const float*>& inputs, float* output)>;
Reference ReferenceAt(Precision p, std::vector<int64_t> factor_elements, Reference ieee);

}  // namespace autotune::tir
