// Scalar element types of the IR. Vector width is a property of loops (vectorized kind), not of
// types, so codegen decides how to emit wide accesses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace autotune::tir {

enum class DType : uint8_t { kBool, kInt32, kInt64, kFloat32, kFloat64 };

inline bool IsFloat(DType t) { return t == DType::kFloat32 || t == DType::kFloat64; }
inline bool IsInt(DType t) { return t == DType::kInt32 || t == DType::kInt64; }
inline int BytesOf(DType t) {
  switch (t) {
    case DType::kBool: return 1;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
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
  }
  return "?";
}

}  // namespace autotune::tir
