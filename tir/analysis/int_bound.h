// Constant integer bound analysis: an interval [min, max] for an integer expression, given intervals
// for some variables. Used by the simplifier to fold comparisons, div/mod and min/max.
//
// Assumes index arithmetic does not overflow its dtype (as TVM's analyzer does). Interval endpoints
// saturate at the int64 limits, which stand for minus/plus infinity.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>

#include "tir/expr.h"

namespace autotune::tir {

struct IntBound {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

  int64_t min = kNegInf;
  int64_t max = kPosInf;

  static IntBound Unknown() { return {kNegInf, kPosInf}; }
  static IntBound Const(int64_t v) { return {v, v}; }
  bool IsUnknown() const { return min == kNegInf && max == kPosInf; }
  // True when the value is exactly one finite integer (an endpoint at a limit is not finite).
  bool IsConst() const { return min == max && min != kNegInf && max != kPosInf; }
  bool HasFiniteMin() const { return min != kNegInf; }
  bool HasFiniteMax() const { return max != kPosInf; }
  bool operator==(const IntBound&) const = default;
};

class BoundAnalyzer {
 public:
  // Binds `var` to [min, min + extent - 1] (the range of a loop). An extent < 1 is an empty loop
  // whose body never runs; the var is then bound to [min, min], which is vacuously sound.
  void Bind(const Var& var, int64_t min, int64_t extent);
  // Binds `var` to `bound`, replacing any earlier binding.
  void Bind(const Var& var, IntBound bound);
  void Unbind(const Var& var);
  // The bound recorded for `var`, if any.
  std::optional<IntBound> Lookup(const VarNode* var) const;

  // Interval of an integer or bool expression; Unknown() for anything it cannot bound (floats,
  // loads, calls, unbound variables). Bool expressions are within [0, 1].
  IntBound Bound(const Expr& e) const;

 private:
  // Keyed by node; the Var is kept alive so that a freed node's address cannot be reused by a
  // different variable while the binding exists.
  std::unordered_map<const VarNode*, std::pair<Var, IntBound>> vars_;
};

}  // namespace autotune::tir
