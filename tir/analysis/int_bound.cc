#include "tir/analysis/int_bound.h"

#include <algorithm>

#include "tir/int_arith.h"

namespace autotune::tir {
namespace {

constexpr int64_t kNegInf = IntBound::kNegInf;
constexpr int64_t kPosInf = IntBound::kPosInf;

// Saturating arithmetic on interval endpoints. An endpoint at a limit is an infinity and stays one.
int64_t SatAdd(int64_t a, int64_t b) {
  if (a == kNegInf || b == kNegInf) return kNegInf;
  if (a == kPosInf || b == kPosInf) return kPosInf;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kPosInf : kNegInf;
  return r;
}

int64_t SatNeg(int64_t a) {
  if (a == kNegInf) return kPosInf;
  if (a == kPosInf) return kNegInf;
  return -a;
}

int64_t SatMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;  // also for infinities: the endpoint is a bound, 0 * x is 0
  bool negative = (a < 0) != (b < 0);
  if (a == kNegInf || a == kPosInf || b == kNegInf || b == kPosInf) return negative ? kNegInf : kPosInf;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return negative ? kNegInf : kPosInf;
  return r;
}

// floor(a / b) for a nonzero divisor, where either endpoint may be an infinity. Returns false for
// infinity / infinity, which has no useful bound.
bool SatFloorDiv(int64_t a, int64_t b, int64_t* out) {
  bool a_inf = a == kNegInf || a == kPosInf, b_inf = b == kNegInf || b == kPosInf;
  if (a_inf && b_inf) return false;
  if (a_inf) {
    *out = ((a < 0) != (b < 0)) ? kNegInf : kPosInf;
  } else if (b_inf) {
    *out = (a == 0 || (a < 0) == (b < 0)) ? 0 : -1;  // a tiny quotient, rounded down
  } else {
    *out = FloorDivInt(a, b);
  }
  return true;
}

IntBound DTypeRange(DType t) {
  switch (t) {
    case DType::kBool: return {0, 1};
    case DType::kInt32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default: return IntBound::Unknown();
  }
}

IntBound Intersect(IntBound a, IntBound b) { return {std::max(a.min, b.min), std::min(a.max, b.max)}; }
bool Within(IntBound inner, IntBound outer) { return inner.min >= outer.min && inner.max <= outer.max; }

IntBound Add(IntBound a, IntBound b) { return {SatAdd(a.min, b.min), SatAdd(a.max, b.max)}; }
IntBound Sub(IntBound a, IntBound b) { return {SatAdd(a.min, SatNeg(b.max)), SatAdd(a.max, SatNeg(b.min))}; }

IntBound Mul(IntBound a, IntBound b) {
  int64_t c[4] = {SatMul(a.min, b.min), SatMul(a.min, b.max), SatMul(a.max, b.min), SatMul(a.max, b.max)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

IntBound FloorDiv(IntBound a, IntBound b) {
  // Only a divisor range that excludes zero is handled. floor(a / b) is monotone in each argument
  // on such a box, so the extremes are at its corners.
  if (b.min <= 0 && b.max >= 0) return IntBound::Unknown();
  int64_t c[4];
  if (!SatFloorDiv(a.min, b.min, &c[0]) || !SatFloorDiv(a.min, b.max, &c[1]) || !SatFloorDiv(a.max, b.min, &c[2]) ||
      !SatFloorDiv(a.max, b.max, &c[3])) {
    return IntBound::Unknown();
  }
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

IntBound FloorMod(IntBound a, IntBound b) {
  if (b.IsConst() && b.min > 0) {
    int64_t d = b.min;
    // Within one period the result is the dividend shifted by a multiple of d.
    if (a.HasFiniteMin() && a.HasFiniteMax() && FloorDivInt(a.min, d) == FloorDivInt(a.max, d)) {
      return {FloorModInt(a.min, d), FloorModInt(a.max, d)};
    }
  }
  if (b.min > 0) {
    if (a.min >= 0 && a.max < b.min) return a;  // the divisor exceeds every dividend value
    IntBound r{0, b.max == kPosInf ? kPosInf : b.max - 1};
    if (a.min >= 0) r.max = std::min(r.max, a.max);  // 0 <= a mod b <= a for a >= 0
    return r;
  }
  if (b.max < 0) return {b.min == kNegInf ? kNegInf : b.min + 1, 0};
  return IntBound::Unknown();
}

IntBound Bool01(bool can_be_false, bool can_be_true) {
  return {can_be_false ? 0 : 1, can_be_true ? 1 : 0};
}

IntBound Compare(BinaryOp op, IntBound a, IntBound b) {
  switch (op) {
    case BinaryOp::kEQ:
    case BinaryOp::kNE: {
      bool always_eq = a.IsConst() && b.IsConst() && a.min == b.min;
      bool never_eq = a.max < b.min || b.max < a.min;
      if (op == BinaryOp::kNE) std::swap(always_eq, never_eq);
      return Bool01(!always_eq, !never_eq);
    }
    case BinaryOp::kLT: return Bool01(!(a.max < b.min), !(a.min >= b.max));
    case BinaryOp::kLE: return Bool01(!(a.max <= b.min), !(a.min > b.max));
    case BinaryOp::kGT: return Bool01(!(a.min > b.max), !(a.max <= b.min));
    case BinaryOp::kGE: return Bool01(!(a.min >= b.max), !(a.max < b.min));
    default: return {0, 1};
  }
}

}  // namespace

void BoundAnalyzer::Bind(const Var& var, int64_t min, int64_t extent) {
  if (extent < 1) return Bind(var, IntBound{min, min});
  Bind(var, IntBound{min, SatAdd(min, extent - 1)});
}

void BoundAnalyzer::Bind(const Var& var, IntBound bound) { vars_[var.get()] = {var, bound}; }

void BoundAnalyzer::Unbind(const Var& var) { vars_.erase(var.get()); }

std::optional<IntBound> BoundAnalyzer::Lookup(const VarNode* var) const {
  auto it = vars_.find(var);
  if (it == vars_.end()) return std::nullopt;
  return it->second.second;
}

IntBound BoundAnalyzer::Bound(const Expr& e) const {
  if (IsFloat(e->dtype)) return IntBound::Unknown();
  IntBound r = IntBound::Unknown();
  switch (e->kind) {
    case ExprKind::kIntImm: {
      int64_t v = static_cast<const IntImmNode*>(e.get())->value;
      r = IntBound::Const(v);
      break;
    }
    case ExprKind::kVar: {
      if (auto b = Lookup(static_cast<const VarNode*>(e.get()))) r = *b;
      break;
    }
    case ExprKind::kBinary: {
      const auto* op = static_cast<const BinaryNode*>(e.get());
      if (IsFloat(op->a->dtype)) {
        r = IsComparison(op->op) ? IntBound{0, 1} : IntBound::Unknown();
        break;
      }
      IntBound a = Bound(op->a), b = Bound(op->b);
      switch (op->op) {
        case BinaryOp::kAdd: r = Add(a, b); break;
        case BinaryOp::kSub: r = Sub(a, b); break;
        case BinaryOp::kMul: r = Mul(a, b); break;
        case BinaryOp::kDiv: break;
        case BinaryOp::kFloorDiv: r = FloorDiv(a, b); break;
        case BinaryOp::kFloorMod: r = FloorMod(a, b); break;
        case BinaryOp::kMin: r = {std::min(a.min, b.min), std::min(a.max, b.max)}; break;
        case BinaryOp::kMax: r = {std::max(a.min, b.min), std::max(a.max, b.max)}; break;
        case BinaryOp::kAnd: r = {a.min > 0 && b.min > 0, a.max > 0 && b.max > 0}; break;
        case BinaryOp::kOr: r = {a.min > 0 || b.min > 0, a.max > 0 || b.max > 0}; break;
        default: r = Compare(op->op, a, b); break;
      }
      break;
    }
    case ExprKind::kNot: {
      IntBound a = Bound(static_cast<const NotNode*>(e.get())->a);
      r = Bool01(a.max > 0, a.min <= 0);
      break;
    }
    case ExprKind::kSelect: {
      const auto* op = static_cast<const SelectNode*>(e.get());
      IntBound c = Bound(op->cond);
      if (c.min > 0) {
        r = Bound(op->true_value);
      } else if (c.max <= 0) {
        r = Bound(op->false_value);
      } else {
        IntBound t = Bound(op->true_value), f = Bound(op->false_value);
        r = {std::min(t.min, f.min), std::max(t.max, f.max)};
      }
      break;
    }
    case ExprKind::kCast: {
      const auto* op = static_cast<const CastNode*>(e.get());
      IntBound target = DTypeRange(op->dtype);
      if (IsFloat(op->value->dtype)) {
        r = target;
        break;
      }
      IntBound src = Intersect(Bound(op->value), DTypeRange(op->value->dtype));
      // A source value outside the target's range wraps: then only the target's range is known.
      r = Within(src, target) ? src : target;
      break;
    }
    default: break;
  }
  // Every bool is 0 or 1 whatever its form; this also bounds bool loads, calls and variables.
  if (e->dtype == DType::kBool) r = Intersect(r, IntBound{0, 1});
  return r;
}

}  // namespace autotune::tir
