// Vector copies of 16-bit (and zero-padded float32) elements: a vectorized loop of 2, 4 or 8 lanes
// that stores `src[i]` (or `inside ? src[i] : 0`, the same condition for every lane) between aligned
// places, which CUDA codegen emits as one 4-, 8- or 16-byte access a side, or one cp.async into a
// pipelined copy. The pipelining pass asks the same question to tell the copies that will run
// asynchronously from those that stall on their loads. Also the index forms both ask about.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tir/stmt.h"

namespace autotune::tir {

// An integer index as coef * v + (sum of coefficient * term) + constant (tir/transform/linear_form.h's
// form, v's term apart); `ok` is false when v occurs inside another term.
struct LinearForm {
  bool ok = true;
  int64_t coef = 0;
  int64_t constant = 0;
  std::vector<int64_t> term_coefs;
};
LinearForm LinearIn(const Expr& index, const VarNode* v);

// Whether `index` is v + base (v with coefficient 1).
bool UnitStride(const Expr& index, const VarNode* v);
// Whether `index` is v + base with base provably a multiple of `width`.
bool AlignedUnitStride(const Expr& index, const VarNode* v, int64_t width);

// `c1 ? (c2 ? x : 0) : 0` as `(c1 && c2) ? x : 0`: the condition of nested zero paddings and the
// value they guard; no condition where `value` is no padding.
std::pair<Expr, Expr> ZeroPadding(const Expr& value);

struct PackedCopy {
  const IfThenElseNode* guard = nullptr;  // around the store, not depending on the lane
  const BufferStoreNode* store = nullptr;
  const BufferLoadNode* src = nullptr;
  Expr inside;        // the padding's condition, or null
  int64_t lanes = 0;  // 2, 4 or 8
};
// The vectorized loop `op` as a packed copy, or nothing.
std::optional<PackedCopy> MatchPackedCopy(const ForNode* op);

}  // namespace autotune::tir
