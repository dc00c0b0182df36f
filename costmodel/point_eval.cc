#include "costmodel/point_eval.h"

#include <algorithm>

#include "support/check.h"
#include "tir/int_arith.h"

namespace autotune::costmodel {

using namespace autotune::tir;

namespace {

// out[i] = op(a[i], b[i]) where a uniform operand is read at 0. The operator is a template argument
// and each case has its own loop, so that the loops have no dispatch in them and can vectorize.
template <BinaryOp kOp>
void ApplyAll(const int64_t* a, bool ua, const int64_t* b, bool ub, int64_t* out, int n) {
  if (ua) {
    const int64_t x = a[0];
    for (int i = 0; i < n; ++i) out[i] = EvalBinaryInt(kOp, x, b[i]);
  } else if (ub) {
    const int64_t y = b[0];
    // Tile sizes are mostly powers of two: floor division and modulo by 2^k are a shift and a mask
    // (for negative dividends too), far cheaper than a division per point.
    if ((kOp == BinaryOp::kFloorDiv || kOp == BinaryOp::kFloorMod) && y > 0 && (y & (y - 1)) == 0) {
      const int shift = __builtin_ctzll(static_cast<uint64_t>(y));
      for (int i = 0; i < n; ++i) out[i] = kOp == BinaryOp::kFloorDiv ? a[i] >> shift : a[i] & (y - 1);
      return;
    }
    for (int i = 0; i < n; ++i) out[i] = EvalBinaryInt(kOp, a[i], y);
  } else {
    for (int i = 0; i < n; ++i) out[i] = EvalBinaryInt(kOp, a[i], b[i]);
  }
}

void ApplyAll(BinaryOp op, const int64_t* a, bool ua, const int64_t* b, bool ub, int64_t* out, int n) {
  switch (op) {
#define AUTOTUNE_CASE(k) \
  case BinaryOp::k: ApplyAll<BinaryOp::k>(a, ua, b, ub, out, n); return;
    AUTOTUNE_CASE(kAdd) AUTOTUNE_CASE(kSub) AUTOTUNE_CASE(kMul) AUTOTUNE_CASE(kDiv)
    AUTOTUNE_CASE(kFloorDiv) AUTOTUNE_CASE(kFloorMod) AUTOTUNE_CASE(kMin) AUTOTUNE_CASE(kMax)
    AUTOTUNE_CASE(kEQ) AUTOTUNE_CASE(kNE) AUTOTUNE_CASE(kLT) AUTOTUNE_CASE(kLE)
    AUTOTUNE_CASE(kGT) AUTOTUNE_CASE(kGE) AUTOTUNE_CASE(kAnd) AUTOTUNE_CASE(kOr)
#undef AUTOTUNE_CASE
  }
}

}  // namespace

void PointEvaluator::Reset(int num_points) {
  AUTOTUNE_CHECK(num_points >= 1 && num_points <= kMaxPoints, "point count out of range");
  n_ = num_points;
  bindings_.clear();
}

void PointEvaluator::Bind(const VarNode* var, const int64_t* values) { bindings_.push_back({var, values, 0}); }
void PointEvaluator::Bind(const VarNode* var, int64_t value) { bindings_.push_back({var, nullptr, value}); }

bool PointEvaluator::Eval(const Expr& e, int64_t* out) {
  const Values r = EvalAt(e, out, 0);
  if (r.v != out) std::copy_n(r.v, r.uniform ? 1 : n_, out);
  return r.uniform;
}

int64_t* PointEvaluator::Grow(size_t index) {
  while (scratch_.size() <= index) scratch_.push_back(std::make_unique<int64_t[]>(kMaxPoints));
  return scratch_[index].get();
}

PointEvaluator::Values PointEvaluator::EvalAt(const Expr& e, int64_t* out, int depth) {
  switch (e->kind) {
    case ExprKind::kIntImm: out[0] = static_cast<const IntImmNode*>(e.get())->value; return {out, true};
    case ExprKind::kVar: {
      const auto* v = static_cast<const VarNode*>(e.get());
      // The innermost binding wins; bindings are few (one per enclosing loop), so a scan is cheapest.
      for (auto it = bindings_.rbegin(); it != bindings_.rend(); ++it) {
        if (it->var != v) continue;
        if (it->values) return {it->values, false};
        out[0] = it->constant;
        return {out, true};
      }
      break;
    }
    case ExprKind::kBinary: {
      const auto* b = static_cast<const BinaryNode*>(e.get());
      if (IsFloat(b->dtype)) break;
      const Values x = EvalAt(b->a, Scratch(depth, 0), depth + 1);
      const Values y = EvalAt(b->b, Scratch(depth, 1), depth + 1);
      if (x.uniform && y.uniform) {
        out[0] = EvalBinaryInt(b->op, x.v[0], y.v[0]);
        return {out, true};
      }
      ApplyAll(b->op, x.v, x.uniform, y.v, y.uniform, out, n_);
      return {out, false};
    }
    case ExprKind::kNot: {
      const Values x = EvalAt(static_cast<const NotNode*>(e.get())->a, Scratch(depth, 0), depth + 1);
      for (int i = 0; i < (x.uniform ? 1 : n_); ++i) out[i] = x.v[i] == 0;
      return {out, x.uniform};
    }
    case ExprKind::kSelect: {
      const auto* s = static_cast<const SelectNode*>(e.get());
      const Values c = EvalAt(s->cond, Scratch(depth, 0), depth + 1);
      // A uniform condition picks one branch for all points: the other is not evaluated.
      if (c.uniform) return EvalAt(c.v[0] ? s->true_value : s->false_value, out, depth + 1);
      const Values t = EvalAt(s->true_value, Scratch(depth, 1), depth + 1);
      const Values f = EvalAt(s->false_value, Scratch(depth, 2), depth + 1);
      for (int i = 0; i < n_; ++i) out[i] = c.v[i] ? t.v[t.uniform ? 0 : i] : f.v[f.uniform ? 0 : i];
      return {out, false};
    }
    case ExprKind::kCast: {
      const auto* c = static_cast<const CastNode*>(e.get());
      if (IsFloat(c->dtype)) break;
      const Values x = EvalAt(c->value, out, depth + 1);
      if (c->dtype != DType::kBool) return x;
      for (int i = 0; i < (x.uniform ? 1 : n_); ++i) out[i] = x.v[i] != 0;
      return {out, x.uniform};
    }
    default: break;  // floats, loads, calls, reductions: no integer value here
  }
  out[0] = 0;  // unbound variables too
  return {out, true};
}

}  // namespace autotune::costmodel
