// Scalar element types of the IR. Vector width is a property of loops (vectorized kind), not of
// types, so codegen decides how to emit wide accesses. float16 and bfloat16 are storage types: a
// kernel loads them into float32, computes there and rounds once when it stores (support/half.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace autotune::tir {

enum class DType : uint8_t { kBool, kInt32, kInt64, kFloat32, kFloat64, kFloat16, kBFloat16 };

// The 16-bit float types: only loaded, stored and converted, never computed in.
inline bool IsHalf(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }
inline bool IsFloat(DType t) { return t == DType::kFloat32 || t == DType::kFloat64 || IsHalf(t); }
inline bool IsInt(DType t) { return t == DType::kInt32 || t == DType::kInt64; }
inline int BytesOf(DType t) {
  switch (t) {
    case DType::kBool: return 1;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
  }
  return 0;
}
inline const char* DTypeName(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
  }
  return "?";
}

// The element types of an operator's tensors (--dtype): float32, float16 or bfloat16.
inline std::optional<DType> ParseElementType(std::string_view name) {
  if (name == "float32") return DType::kFloat32;
  if (name == "float16") return DType::kFloat16;
  if (name == "bfloat16") return DType::kBFloat16;
  return std::nullopt;
}

}  // namespace autotune::tir
