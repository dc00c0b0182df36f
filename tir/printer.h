// Deterministic, TVM-script-like text of IR trees, used in golden tests of passes and in --dump-ir.
//
// Statements (two-space indentation, every line ends with '\n'):
//   for (i: int32, 0, 128) serial {                      var: dtype, min, extent, kind
//   for (tx: int32, 0, 64) thread_binding "threadIdx.x" {
//   for (k: int32, 0, 8) unrolled auto_unroll_max_step=64 {
//   C[i, j] = (C[i, j] + (A[i, k] * B[k, j]))
//   allocate A_shared: float32[64, 8] shared {           (" strides=[9, 1]" before the brace if strided)
//   if (i < 10) {  /  } else {  /  }                     (non-infix conditions get parentheses)
//   barrier()
// Expressions: 128 (int32), 128i64 (int64), true/false, 1f / 0.5f (float32 whose value is exactly a
// float), 0.5f64 (float64), float32(0.1) (a float32 immediate holding a double that is not a float),
// float32(inf), float64(nan); binary operators fully parenthesized, floordiv(a, b), floormod(a, b),
// min(a, b), max(a, b), !a, select(c, t, f), cast<float64>(x), exp(x), A[i, j],
// sum(x, axis=[k: 0..128]) (the axis ranges over [0, 128)).
// Distinct variables sharing a name in one printed tree get suffixes _1, _2, ... in order of first
// appearance (the first keeps its name; a suffixed name never equals another variable's name), and
// likewise for buffers, so the text is unambiguous. An empty Seq prints as nothing.
#pragma once

#include <string>

#include "tir/expr.h"
#include "tir/stmt.h"

namespace autotune::tir {

std::string ToString(const Expr& e);
std::string ToString(const Stmt& s);

}  // namespace autotune::tir
