// Integer arithmetic with TIR's meaning on int64 values: floor division and modulo round towards minus
// infinity, and a binary operator applied to two values wraps instead of overflowing (division by zero
// gives 0). Constant folding and the cost model's index evaluator both compute with it.
#pragma once

#include <cstdint>
#include <limits>

#include "tir/expr.h"

namespace autotune::tir {

inline int64_t WrapAdd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
inline int64_t WrapSub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
inline int64_t WrapMul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

// a + b and a * b, or `cap` when the exact value would not fit in 64 bits: sizes and counts that only
// need to be known as "too large".
inline int64_t AddOrCap(int64_t a, int64_t b, int64_t cap) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? cap : r;
}
inline int64_t MulOrCap(int64_t a, int64_t b, int64_t cap) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? cap : r;
}

// Whether v is a value of the integer (or bool) type t.
inline bool FitsDType(int64_t v, DType t) {
  switch (t) {
    case DType::kInt32: return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
    case DType::kBool: return v == 0 || v == 1;
    default: return true;
  }
}

// Checked arithmetic: false when the result overflows int64 or does not fit `t`.
inline bool CheckedAdd(int64_t a, int64_t b, DType t, int64_t* out) {
  return !__builtin_add_overflow(a, b, out) && FitsDType(*out, t);
}
inline bool CheckedMul(int64_t a, int64_t b, DType t, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out) && FitsDType(*out, t);
}
inline bool CheckedNeg(int64_t a, DType t, int64_t* out) {
  return a != std::numeric_limits<int64_t>::min() && FitsDType(*out = -a, t);
}

inline int64_t FloorDivInt(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return WrapSub(0, a);  // the one overflowing quotient is INT64_MIN / -1
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

inline int64_t FloorModInt(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// op(a, b) on integers; comparisons and logic give 0 or 1.
inline int64_t EvalBinaryInt(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
    case BinaryOp::kAdd: return WrapAdd(a, b);
    case BinaryOp::kSub: return WrapSub(a, b);
    case BinaryOp::kMul: return WrapMul(a, b);
    case BinaryOp::kDiv:
    case BinaryOp::kFloorDiv: return FloorDivInt(a, b);
    case BinaryOp::kFloorMod: return FloorModInt(a, b);
    case BinaryOp::kMin: return a < b ? a : b;
    case BinaryOp::kMax: return a > b ? a : b;
    case BinaryOp::kEQ: return a == b;
    case BinaryOp::kNE: return a != b;
    case BinaryOp::kLT: return a < b;
    case BinaryOp::kLE: return a <= b;
    case BinaryOp::kGT: return a > b;
    case BinaryOp::kGE: return a >= b;
    case BinaryOp::kAnd: return a != 0 && b != 0;
    case BinaryOp::kOr: return a != 0 || b != 0;
  }
  return 0;
}

}  // namespace autotune::tir
