// Evaluates an integer index expression at a small batch of points at once (the lanes of one warp
// request, or the two values of one loop), for the access features. Working on a batch keeps the
// tree walk and its dispatch out of the per-point work, and values that are the same at every point
// (most subexpressions) are computed once.
//
// Semantics follow the IR: floordiv/floormod round towards minus infinity, comparisons and logical
// operators give 0 or 1. Whatever has no integer value here (loads, calls, floats, reductions) and
// any variable that is not bound counts as 0; division by 0 gives 0. Arithmetic wraps instead of
// overflowing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tir/expr.h"

namespace autotune::costmodel {

class PointEvaluator {
 public:
  // The most points evaluated at once: 32 lanes times a 4-wide vector.
  static constexpr int kMaxPoints = 128;

  // Starts a new evaluation at `num_points` points (1..kMaxPoints), with no variable bound. The
  // scratch space is kept, so an evaluator reused for many accesses allocates only at first.
  void Reset(int num_points);

  int num_points() const { return n_; }
  // Binds `var` to one value per point (`values` must outlive the evaluation), or to a constant.
  void Bind(const tir::VarNode* var, const int64_t* values);
  void Bind(const tir::VarNode* var, int64_t value);

  // Writes the value at every point to out[0..num_points); returns true when the value is the same
  // at every point, and then only out[0] is written.
  bool Eval(const tir::Expr& e, int64_t* out);

 private:
  struct Binding {
    const tir::VarNode* var;
    const int64_t* values;  // null for a constant
    int64_t constant;
  };

  // The values of `e`: either written to `out` or, for a bound variable, its bound values (no copy).
  struct Values {
    const int64_t* v;
    bool uniform;
  };
  Values EvalAt(const tir::Expr& e, int64_t* out, int depth);
  // Scratch space for the operands of a node at `depth` (three per depth, reused between calls).
  int64_t* Scratch(int depth, int slot) {
    const size_t i = static_cast<size_t>(depth) * 3 + static_cast<size_t>(slot);
    return i < scratch_.size() ? scratch_[i].get() : Grow(i);
  }
  int64_t* Grow(size_t index);

  int n_ = 1;
  std::vector<Binding> bindings_;
  std::vector<std::unique_ptr<int64_t[]>> scratch_;
};

}  // namespace autotune::costmodel
