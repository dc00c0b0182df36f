// Region analysis for bound inference: the range an integer index expression covers when some
// loop variables run over their whole range and the others stay fixed. The result is a symbolic
// minimum (in the fixed variables) and a constant extent, which is what an allocation needs.
#pragma once

#include <functional>
#include <optional>
#include <unordered_map>

#include "tir/analysis/int_bound.h"
#include "tir/expr.h"

namespace autotune::tir {

struct LoopRange {
  Var var;
  int64_t extent = 1;  // the variable runs over [0, extent)
  bool relaxed = false;
};

struct IndexRange {
  Expr min;            // symbolic in the fixed variables
  int64_t extent = 1;  // constant
};

// Range of `index` where `loops` gives the extent of every loop variable and whether it is
// relaxed (runs over its whole range) or fixed. Linear parts stay exact; a non-linear part that
// mixes fixed and relaxed variables is bounded as if all its variables ran over their ranges.
IndexRange EvalIndexRange(const Expr& index, const std::unordered_map<const VarNode*, LoopRange>& loops);

// Union of two ranges of the same dimension: exact when their minimums differ by a constant,
// otherwise nullopt (the caller then takes the whole dimension).
std::optional<IndexRange> UnionRange(const IndexRange& a, const IndexRange& b);

}  // namespace autotune::tir
