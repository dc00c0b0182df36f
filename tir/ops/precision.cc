#include "tir/ops/precision.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>

namespace autotune::tir {

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kIEEE: return "ieee";
    case Precision::kTF32: return "tf32";
    case Precision::kSplitTF32: return "3xtf32";
  }
  return "?";
}

std::optional<Precision> ParsePrecision(std::string_view name) {
  for (Precision p : {Precision::kIEEE, Precision::kTF32, Precision::kSplitTF32}) {
    if (name == PrecisionName(p)) return p;
  }
  return std::nullopt;
}

std::string NumberType::Name() const {
  return precision == Precision::kIEEE ? DTypeName(element) : PrecisionName(precision);
}

Result<NumberType> ParseNumberType(const std::string& name) {
  if (auto t = ParseElementType(name)) return NumberType{*t, Precision::kIEEE};
  if (auto p = ParsePrecision(name); p && *p != Precision::kIEEE) return NumberType{DType::kFloat32, *p};
  return MakeError(fmt::format("unknown element type '{}' (expected float32, float16, bfloat16, tf32 or 3xtf32)", name));
}

Result<NumberType> CombineNumberType(const std::string& dtype, const std::string& precision) {
  AT_TRY(type, ParseNumberType(dtype));
  const auto p = ParsePrecision(precision);
  if (!p) return MakeError(fmt::format("unknown precision '{}' (expected ieee, tf32 or 3xtf32)", precision));
  if (*p == Precision::kIEEE) return type;
  if (type.element != DType::kFloat32) {
    return MakeError(fmt::format("--precision {} is for float32 products, not {}", precision, dtype));
  }
  return NumberType{DType::kFloat32, *p};
}

Expr RoundTF32(Expr x) { return Call(DType::kFloat32, kRoundTF32, {std::move(x)}); }

Expr ProductAt(Expr a, Expr b, Precision p) {
  switch (p) {
    case Precision::kIEEE: return Mul(std::move(a), std::move(b));
    case Precision::kTF32: return Mul(RoundTF32(std::move(a)), RoundTF32(std::move(b)));
    case Precision::kSplitTF32: {
      const Expr a_hi = RoundTF32(a), b_hi = RoundTF32(b);
      const Expr a_lo = RoundTF32(Sub(a, a_hi)), b_lo = RoundTF32(Sub(b, b_hi));
      return Add(Add(Mul(a_lo, b_hi), Mul(a_hi, b_lo)), Mul(a_hi, b_hi));
    }
  }
  return Mul(std::move(a), std::move(b));
}

float RoundToTF32(float x) {
  if (!std::isfinite(x)) return x;
  uint32_t bits = std::bit_cast<uint32_t>(x);
  bits = (bits + 0x1000u) & 0xffffe000u;  // half of the dropped unit added to the magnitude: ties away
  return std::bit_cast<float>(bits);
}

Reference ReferenceAt(Precision p, std::vector<int64_t> factor_elements, Reference ieee) {
  if (p != Precision::kTF32) return ieee;
  return [sizes = std::move(factor_elements), ieee = std::move(ieee)](const std::vector<const float*>& in, float* out) {
    std::vector<std::vector<float>> rounded(sizes.size());
    std::vector<const float*> args = in;
    for (size_t i = 0; i < sizes.size(); ++i) {
      rounded[i].assign(in[i], in[i] + sizes[i]);
      for (float& x : rounded[i]) x = RoundToTF32(x);
      args[i] = rounded[i].data();
    }
    ieee(args, out);
  };
}

}  // namespace autotune::tir
