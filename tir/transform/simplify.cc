#include "tir/transform/simplify.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tir/functor.h"
#include "tir/structural_equal.h"
#include "tir/int_arith.h"
#include "tir/transform/linear_form.h"

namespace autotune::tir {
namespace {

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// ---- Integer helpers ----------------------------------------------------------------------------

int64_t CeilDivInt(int64_t a, int64_t b) {  // b > 0
  int64_t q = FloorDivInt(a, b);
  return q * b == a ? q : q + 1;
}
// gcd of magnitudes, in unsigned arithmetic so that INT64_MIN is safe. Callers start from a
// positive int64 (or guard INT64_MIN), so the result fits.
int64_t AbsGcd(int64_t a, int64_t b) {
  auto mag = [](int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); };
  return static_cast<int64_t>(std::gcd(mag(a), mag(b)));
}

// The value a float immediate denotes: a float32 immediate is rounded to float, as codegen emits it.
double FloatValue(const FloatImmNode* n) {
  return n->dtype == DType::kFloat32 ? static_cast<double>(static_cast<float>(n->value)) : n->value;
}

bool IsEmptySeq(const Stmt& s) {
  const auto* seq = As<SeqNode>(s);
  return seq && seq->stmts.empty();
}
Stmt Empty() { return Seq({}); }

// `e` as floordiv(base, divisor) with nested divisions by positive constants flattened
// (floordiv(floordiv(y, a), b) is y over a * b); anything else is itself over 1.
struct Quotient {
  const Expr* base;
  int64_t divisor;
};
Quotient AsQuotient(const Expr& e, DType t) {
  Quotient q{&e, 1};
  for (const auto* d = As<BinaryNode>(*q.base); d && d->op == BinaryOp::kFloorDiv; d = As<BinaryNode>(*q.base)) {
    const int64_t* c = AsConstInt(d->b);
    int64_t next;
    if (!c || *c <= 0 || !CheckedMul(q.divisor, *c, t, &next)) break;
    q = {&d->a, next};
  }
  return q;
}

// Whether `e` is floordiv(x, c), nested divisions flattened on both sides: floordiv(y, 12) is
// floordiv(floordiv(y, 3), 4), as the simplifier folds the latter into the former.
bool IsQuotientOf(const Expr& e, const Expr& x, int64_t c, DType t) {
  const auto* d = As<BinaryNode>(e);
  if (!d || d->op != BinaryOp::kFloorDiv) return false;
  const Quotient qe = AsQuotient(e, t), qx = AsQuotient(x, t);
  int64_t want;
  if (!CheckedMul(qx.divisor, c, t, &want)) want = 0;
  if (qe.divisor == want && ExprDeepEqual(*qe.base, *qx.base)) return true;
  // The quotient may have been reduced by a common factor (floordiv(8b, 20) is floordiv(2b, 5)):
  // x over c, simplified alike, is then the same expression. Its divisor then divides x's times c,
  // which rules out most pairs before the (costly) simplification. (A quotient nested in a product
  // inside x, folded in by the simplifier, could give another divisor: such a pair is left apart,
  // a sum not combined, never a wrong one; no program of lower-bench's workloads changed.)
  if (want != 0 && want % qe.divisor != 0) return false;
  return ExprDeepEqual(e, Simplify(FloorDiv(x, IntImm(c, t))));
}

}  // namespace

// Recombines what splitting a loop (or an index into several) produces, coefficient k:
//   floordiv(x, c) * (k * c) + floormod(x, c) * k             == x * k
//   floormod(floordiv(x, c), d) * (k * c) + floormod(x, c) * k == floormod(x, c * d) * k
// (both hold for floor division by positive constants, for any x). The second turns the mixed-
// radix digits of a fused thread index, put back together by a cooperative fetch, into one modulo
// that the first rule then cancels: x/196*196 + x/98%2*98 + x/7%14*7 + x%7 becomes x.
void CombineDivMod(LinearSum* l) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < l->terms.size() && !changed; ++i) {
      const auto* mod = As<BinaryNode>(l->terms[i].expr);
      if (!mod || mod->op != BinaryOp::kFloorMod) continue;
      const int64_t* c = AsConstInt(mod->b);
      int64_t k = l->terms[i].coeff, kc;
      if (!c || *c <= 0 || !CheckedMul(k, *c, l->dtype, &kc)) continue;
      const auto replace = [&](size_t j, const Expr& combined) {
        LinearSum next = *l;
        next.terms.erase(next.terms.begin() + static_cast<std::ptrdiff_t>(std::max(i, j)));
        next.terms.erase(next.terms.begin() + static_cast<std::ptrdiff_t>(std::min(i, j)));
        next.Add(combined, k);
        if (!next.ok) return false;
        *l = std::move(next);
        return true;
      };
      for (size_t j = 0; j < l->terms.size() && !changed; ++j) {
        if (l->terms[j].coeff != kc) continue;
        const Expr& other = l->terms[j].expr;
        if (IsQuotientOf(other, mod->a, *c, l->dtype)) {
          changed = replace(j, mod->a);
          continue;
        }
        const auto* outer = As<BinaryNode>(other);
        const int64_t* d = outer && outer->op == BinaryOp::kFloorMod ? AsConstInt(outer->b) : nullptr;
        int64_t cd;
        if (!d || *d <= 0 || !IsQuotientOf(outer->a, mod->a, *c, l->dtype)) continue;
        if (!CheckedMul(*c, *d, l->dtype, &cd)) continue;
        changed = replace(j, FloorMod(mod->a, IntImm(cd, l->dtype)));
      }
    }
  }
}

namespace {

// Builds the canonical expression of a linear form: ((t0*c0 + t1) - t2*c2) + constant.
Expr FromLinear(LinearSum l) {
  CombineDivMod(&l);
  DType t = l.dtype;
  auto scaled = [t](const Expr& e, int64_t c) { return c == 1 ? e : Mul(e, IntImm(c, t)); };
  Expr acc;
  for (const auto& term : l.terms) {
    int64_t c = term.coeff, neg;
    if (!acc) {
      acc = scaled(term.expr, c);
    } else if (c < 0 && CheckedNeg(c, t, &neg)) {
      acc = Sub(acc, scaled(term.expr, neg));
    } else {
      acc = Add(acc, scaled(term.expr, c));
    }
  }
  if (!acc) return IntImm(l.constant, t);
  int64_t neg;
  if (l.constant < 0 && CheckedNeg(l.constant, t, &neg)) return Sub(acc, IntImm(neg, t));
  if (l.constant != 0) return Add(acc, IntImm(l.constant, t));
  return acc;
}

std::optional<bool> CompareConst(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
    case BinaryOp::kEQ:
    case BinaryOp::kNE:
    case BinaryOp::kLT:
    case BinaryOp::kLE:
    case BinaryOp::kGT:
    case BinaryOp::kGE: return EvalBinaryInt(op, a, b) != 0;
    default: return std::nullopt;
  }
}

// The truth of `d OP 0` when the interval of d decides it.
std::optional<bool> DecideAgainstZero(BinaryOp op, IntBound d) {
  switch (op) {
    case BinaryOp::kLT: if (d.max < 0) return true; if (d.min >= 0) return false; break;
    case BinaryOp::kLE: if (d.max <= 0) return true; if (d.min > 0) return false; break;
    case BinaryOp::kGT: if (d.min > 0) return true; if (d.max <= 0) return false; break;
    case BinaryOp::kGE: if (d.min >= 0) return true; if (d.max < 0) return false; break;
    case BinaryOp::kEQ: if (d.min == 0 && d.max == 0) return true; if (d.min > 0 || d.max < 0) return false; break;
    case BinaryOp::kNE: if (d.min == 0 && d.max == 0) return false; if (d.min > 0 || d.max < 0) return true; break;
    default: break;
  }
  return std::nullopt;
}

BinaryOp Negate(BinaryOp op) {
  switch (op) {
    case BinaryOp::kEQ: return BinaryOp::kNE;
    case BinaryOp::kNE: return BinaryOp::kEQ;
    case BinaryOp::kLT: return BinaryOp::kGE;
    case BinaryOp::kLE: return BinaryOp::kGT;
    case BinaryOp::kGT: return BinaryOp::kLE;
    case BinaryOp::kGE: return BinaryOp::kLT;
    default: return op;
  }
}

// a OP b  <=>  b Mirror(OP) a
BinaryOp Mirror(BinaryOp op) {
  switch (op) {
    case BinaryOp::kLT: return BinaryOp::kGT;
    case BinaryOp::kLE: return BinaryOp::kGE;
    case BinaryOp::kGT: return BinaryOp::kLT;
    case BinaryOp::kGE: return BinaryOp::kLE;
    default: return op;
  }
}

// Variable bindings that are undone, in reverse, when the scope ends. Every change of a binding
// moves `epoch` on, which retires what the simplifier memoized under the bindings before.
class BindingScope {
 public:
  BindingScope(BoundAnalyzer* an, uint64_t* epoch) : an_(an), epoch_(epoch) {}
  BindingScope(const BindingScope&) = delete;
  BindingScope& operator=(const BindingScope&) = delete;
  ~BindingScope() {
    if (!saved_.empty()) ++*epoch_;
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        an_->Bind(it->first, *it->second);
      } else {
        an_->Unbind(it->first);
      }
    }
  }
  void Bind(const Var& v, IntBound b) {
    ++*epoch_;
    saved_.emplace_back(v, an_->Lookup(v.get()));
    an_->Bind(v, b);
  }

 private:
  BoundAnalyzer* an_;
  uint64_t* epoch_;
  std::vector<std::pair<Var, std::optional<IntBound>>> saved_;
};

// ---- The simplifier -----------------------------------------------------------------------------

// Bottom-up: children are simplified first, then the rules of the node run on the simplified
// children. Every rule returns a simplified expression, or nullptr when it does not apply.
class Simplifier : public IRMutator {
 public:
  explicit Simplifier(BoundAnalyzer* an) : an_(an) {}

  // -- Expressions --

  Expr Mutate_(const VarNode* op, const Expr& self) override {
    if (!single_.empty()) {
      auto it = single_.find(op);
      if (it != single_.end()) return Mutate(it->second);
    }
    return FoldByBound(self);
  }

  // Lowering shares subtrees (a fused loop index is one node under each of the axes it is split
  // back into), so a binary node's result is memoized until a binding changes.
  Expr Mutate_(const BinaryNode* op, const Expr& self) override {
    if (auto it = memo_.find(op); it != memo_.end() && it->second.epoch == epoch_) return it->second.result;
    const uint64_t epoch = epoch_;
    Expr r = KeepIfSame(self, SimplifyBinary(op->op, Mutate(op->a), Mutate(op->b)));
    if (epoch_ == epoch) memo_[op] = {epoch, self, r};
    return r;
  }

  Expr Mutate_(const NotNode* op, const Expr& self) override { return KeepIfSame(self, SimplifyNot(Mutate(op->a))); }

  Expr Mutate_(const SelectNode* op, const Expr& self) override {
    Expr c = Mutate(op->cond), t = Mutate(op->true_value), f = Mutate(op->false_value);
    Expr r;
    if (const int64_t* v = AsConstInt(c)) {
      r = *v ? t : f;
    } else if (ExprDeepEqual(t, f)) {
      r = t;
    } else {
      r = Select(c, t, f);
    }
    return KeepIfSame(self, FoldByBound(r));
  }

  Expr Mutate_(const CastNode* op, const Expr& self) override {
    Expr v = Mutate(op->value);
    Expr r = CastRule(op->dtype, v);
    return KeepIfSame(self, FoldByBound(r ? r : Cast(op->dtype, v)));
  }

  Expr Mutate_(const ReduceNode* op, const Expr& self) override {
    std::vector<Expr> extents;
    for (const auto& e : op->extents) extents.push_back(Mutate(e));
    BindingScope scope(an_, &epoch_);
    for (size_t i = 0; i < op->axis.size(); ++i) {
      scope.Bind(op->axis[i], RangeOf(IntImm(0, extents[i]->dtype), extents[i]));
    }
    Expr source = Mutate(op->source);
    bool same = source == op->source;
    for (size_t i = 0; i < extents.size(); ++i) same = same && extents[i] == op->extents[i];
    if (same) return self;
    return Reduce(op->combiner, source, op->axis, extents);
  }

  // -- Statements --

  Stmt Mutate_(const ForNode* op, const Stmt& self) override {
    Expr mn = Mutate(op->min), ext = Mutate(op->extent);
    IntBound ext_bound = an_->Bound(ext);
    if (ext_bound.max <= 0) return Empty();  // never runs
    bool thread = op->for_kind == ForKind::kThreadBinding;
    // A single iteration is its body at var = min; a thread-bound loop stays (it is the launch
    // geometry), and so does a loop carrying an unroll pragma for the nest below it.
    if (IsConstInt(ext, 1) && !thread && op->auto_unroll_max_step == 0) {
      // The same as simplifying the body with the variable substituted, without the copy.
      auto [it, fresh] = single_.try_emplace(op->var.get(), mn);
      Expr outer = fresh ? nullptr : std::exchange(it->second, mn);
      ++epoch_;
      Stmt body = Mutate(op->body);
      ++epoch_;
      if (fresh) {
        single_.erase(op->var.get());
      } else {
        single_[op->var.get()] = outer;
      }
      return body;
    }
    Stmt body;
    {
      BindingScope scope(an_, &epoch_);
      scope.Bind(op->var, RangeOf(mn, ext));
      body = Mutate(op->body);
    }
    if (IsEmptySeq(body) && !thread) return Empty();
    if (mn == op->min && ext == op->extent && body == op->body) return self;
    return For(op->var, mn, ext, op->for_kind, body, op->tag, op->auto_unroll_max_step);
  }

  Stmt Mutate_(const IfThenElseNode* op, const Stmt& self) override {
    Expr cond = Mutate(op->cond);
    if (const int64_t* c = AsConstInt(cond)) {
      if (*c) return Mutate(op->then_case);
      return op->else_case ? Mutate(op->else_case) : Empty();
    }
    Stmt then_case, else_case;
    {
      BindingScope scope(an_, &epoch_);
      Refine(cond, &scope);
      then_case = Mutate(op->then_case);
    }
    Expr not_cond = SimplifyNot(cond);
    if (op->else_case) {
      BindingScope scope(an_, &epoch_);
      Refine(not_cond, &scope);
      else_case = Mutate(op->else_case);
      if (IsEmptySeq(else_case)) else_case = nullptr;
    }
    if (IsEmptySeq(then_case)) {
      if (!else_case) return Empty();
      return IfThenElse(not_cond, else_case);
    }
    if (cond == op->cond && then_case == op->then_case && else_case == op->else_case) return self;
    return IfThenElse(cond, then_case, else_case);
  }

  Stmt Mutate_(const SeqNode* op, const Stmt& self) override {
    std::vector<Stmt> stmts;
    bool changed = false;
    for (const auto& s : op->stmts) {
      Stmt r = Mutate(s);
      changed = changed || r != s;
      if (IsEmptySeq(r)) {
        changed = true;
      } else {
        stmts.push_back(std::move(r));
      }
    }
    if (!changed) return self;
    return stmts.empty() ? Empty() : Seq(std::move(stmts));
  }

  Stmt Mutate_(const AllocateNode* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    if (IsEmptySeq(body)) return Empty();  // nothing uses the buffer
    if (body == op->body) return self;
    return Allocate(op->buffer, body);
  }

 private:
  // Keeps the original node (and so the sharing of subtrees) when the rules rebuilt it unchanged.
  static Expr KeepIfSame(const Expr& self, const Expr& r) { return ExprDeepEqual(self, r) ? self : r; }

  // An integer or bool expression whose interval is a single value is that value.
  Expr FoldByBound(const Expr& e) {
    if (!(IsInt(e->dtype) || e->dtype == DType::kBool) || e->kind == ExprKind::kIntImm) return e;
    if (HasRangingVariable(e)) return e;
    IntBound b = an_->Bound(e);
    if (!b.IsConst() || !FitsDType(b.min, e->dtype)) return e;
    return e->dtype == DType::kBool ? Bool(b.min != 0) : IntImm(b.min, e->dtype);
  }

  // Whether the sum `e` (of +, - and products with constants) has a variable term that takes more
  // than one value: then its interval is wider than a point, and bounding the whole sum (the
  // simplifier's costliest step on index sums) cannot fold it.
  bool HasRangingVariable(const Expr& e) const {
    const auto* b = As<BinaryNode>(e);
    if (!b) {
      const auto* v = As<VarNode>(e);
      if (!v) return false;
      const std::optional<IntBound> range = an_->Lookup(v);
      return !range || range->min != range->max;
    }
    switch (b->op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub: return HasRangingVariable(b->a) || HasRangingVariable(b->b);
      case BinaryOp::kMul: {
        const int64_t* c = AsConstInt(b->b);
        return c && *c != 0 && HasRangingVariable(b->a);
      }
      default: return false;
    }
  }

  // Range of a loop variable running over [mn, mn + ext), from the intervals of mn and ext.
  IntBound RangeOf(const Expr& mn, const Expr& ext) {
    IntBound m = an_->Bound(mn), e = an_->Bound(ext);
    IntBound r{m.min, IntBound::kPosInf};
    int64_t hi;
    if (e.max <= 0) return {m.min, m.min};  // empty loop: any bound is sound
    if (m.HasFiniteMax() && e.HasFiniteMax() && !__builtin_add_overflow(m.max, e.max - 1, &hi)) r.max = hi;
    if (r.max < r.min) r.max = r.min;
    return r;
  }

  IntBound LinearBound(const LinearSum& l) { return an_->Bound(FromLinear(l)); }

  // Tightens the ranges of variables compared with something in `cond` (which holds here).
  void Refine(const Expr& cond, BindingScope* scope) {
    const auto* b = As<BinaryNode>(cond);
    if (!b) return;
    if (b->op == BinaryOp::kAnd) {
      Refine(b->a, scope);
      Refine(b->b, scope);
      return;
    }
    if (!IsComparison(b->op) || !IsInt(b->a->dtype)) return;
    Var v;
    Expr other;
    BinaryOp op = b->op;
    if (b->a->kind == ExprKind::kVar) {
      v = std::static_pointer_cast<const VarNode>(b->a);
      other = b->b;
    } else if (b->b->kind == ExprKind::kVar) {
      v = std::static_pointer_cast<const VarNode>(b->b);
      other = b->a;
      op = Mirror(op);
    } else {
      return;
    }
    IntBound cur = an_->Bound(v), o = an_->Bound(other);
    // Endpoints at the limits are infinities: never step past them.
    bool finite_max = o.max != IntBound::kPosInf && o.max != IntBound::kNegInf;
    bool finite_min = o.min != IntBound::kPosInf && o.min != IntBound::kNegInf;
    switch (op) {
      case BinaryOp::kLT: if (finite_max) cur.max = std::min(cur.max, o.max - 1); break;
      case BinaryOp::kLE: cur.max = std::min(cur.max, o.max); break;
      case BinaryOp::kGT: if (finite_min) cur.min = std::max(cur.min, o.min + 1); break;
      case BinaryOp::kGE: cur.min = std::max(cur.min, o.min); break;
      case BinaryOp::kEQ: cur = {std::max(cur.min, o.min), std::min(cur.max, o.max)}; break;
      default: return;
    }
    if (cur.min <= cur.max) scope->Bind(v, cur);  // an empty range means dead code: leave it alone
  }

  Expr SimplifyBinary(BinaryOp op, const Expr& a, const Expr& b) {
    Expr r;
    if (IsFloat(a->dtype)) {
      r = FloatRule(op, a, b);
    } else if (IsLogical(op)) {
      r = LogicalRule(op, a, b);
    } else if (const int64_t *ca = AsConstInt(a), *cb = AsConstInt(b); ca && cb && IsComparison(op)) {
      r = Bool(*CompareConst(op, *ca, *cb));
    } else if (IsInt(a->dtype)) {
      switch (op) {
        case BinaryOp::kAdd:
        case BinaryOp::kSub:
        case BinaryOp::kMul: r = ArithRule(op, a, b); break;
        case BinaryOp::kFloorDiv: r = DivRule(a, b); break;
        case BinaryOp::kFloorMod: r = ModRule(a, b); break;
        case BinaryOp::kMin:
        case BinaryOp::kMax: r = MinMaxRule(op, a, b); break;
        default: r = IsComparison(op) ? CompareRule(op, a, b) : nullptr; break;
      }
    } else if ((op == BinaryOp::kEQ || op == BinaryOp::kNE) && ExprDeepEqual(a, b)) {
      r = Bool(op == BinaryOp::kEQ);  // bools
    }
    return FoldByBound(r ? r : MakeBinary(op, a, b));
  }

  // Floats: fold constants only, plus the exact identities x * 1 and x / 1.
  Expr FloatRule(BinaryOp op, const Expr& a, const Expr& b) {
    const auto* fa = As<FloatImmNode>(a);
    const auto* fb = As<FloatImmNode>(b);
    if (fa && fb) return FoldFloat(op, FloatValue(fa), FloatValue(fb), a->dtype);
    if (op == BinaryOp::kMul && fb && FloatValue(fb) == 1.0) return a;
    if (op == BinaryOp::kMul && fa && FloatValue(fa) == 1.0) return b;
    if (op == BinaryOp::kDiv && fb && FloatValue(fb) == 1.0) return a;
    return nullptr;
  }

  static Expr FoldFloat(BinaryOp op, double x, double y, DType t) {
    switch (op) {
      case BinaryOp::kEQ: return Bool(x == y);
      case BinaryOp::kNE: return Bool(x != y);
      case BinaryOp::kLT: return Bool(x < y);
      case BinaryOp::kLE: return Bool(x <= y);
      case BinaryOp::kGT: return Bool(x > y);
      case BinaryOp::kGE: return Bool(x >= y);
      case BinaryOp::kMin:
      case BinaryOp::kMax:
        // min/max with a NaN differ between fminf and a compare-and-select: leave them alone.
        if (std::isnan(x) || std::isnan(y)) return nullptr;
        if (x == y && std::signbit(x) != std::signbit(y)) return nullptr;  // min(-0, +0) is either
        return FloatImm(op == BinaryOp::kMin ? std::min(x, y) : std::max(x, y), t);
      case BinaryOp::kDiv:
        if (y == 0.0) return nullptr;  // never fold a division by zero
        break;
      default: break;
    }
    // Arithmetic in the dtype's own precision, so the folded value is what the kernel computes.
    if (t == DType::kFloat32) {
      float fx = static_cast<float>(x), fy = static_cast<float>(y), r;
      switch (op) {
        case BinaryOp::kAdd: r = fx + fy; break;
        case BinaryOp::kSub: r = fx - fy; break;
        case BinaryOp::kMul: r = fx * fy; break;
        case BinaryOp::kDiv: r = fx / fy; break;
        default: return nullptr;
      }
      return FloatImm(static_cast<double>(r), t);
    }
    double r;
    switch (op) {
      case BinaryOp::kAdd: r = x + y; break;
      case BinaryOp::kSub: r = x - y; break;
      case BinaryOp::kMul: r = x * y; break;
      case BinaryOp::kDiv: r = x / y; break;
      default: return nullptr;
    }
    return FloatImm(r, t);
  }

  static Expr LogicalRule(BinaryOp op, const Expr& a, const Expr& b) {
    const int64_t* ca = AsConstInt(a);
    const int64_t* cb = AsConstInt(b);
    bool is_and = op == BinaryOp::kAnd;
    // true && x -> x, false && x -> false; false || x -> x, true || x -> true.
    if (ca) return (*ca != 0) == is_and ? b : Bool(!is_and);
    if (cb) return (*cb != 0) == is_and ? a : Bool(!is_and);
    if (ExprDeepEqual(a, b)) return a;
    return nullptr;
  }

  // Integer +, -, * by a constant: the canonical linear form. A product of two non-constant
  // factors is kept as a term, never distributed (distribution can grow exponentially).
  static Expr ArithRule(BinaryOp op, const Expr& a, const Expr& b) {
    LinearSum l(a->dtype);
    if (op != BinaryOp::kMul) {
      l.Add(a, 1);
      l.Add(b, op == BinaryOp::kSub ? -1 : 1);
    } else if (const int64_t* c = AsConstInt(b)) {
      l.Add(a, *c);
    } else if (const int64_t* c = AsConstInt(a)) {
      l.Add(b, *c);
    } else {
      return nullptr;
    }
    if (!l.ok) return nullptr;
    return FromLinear(std::move(l));
  }

  // r = k * coarse + fine with k dividing c, every term of `coarse` integral and 0 <= fine < k by
  // the bounds: then floordiv(r, c) = floordiv(coarse, c / k) and
  // floormod(r, c) = floormod(coarse, c / k) * k + fine. This keeps the lane of a vector access
  // (floormod(x * 4 + lane, 8) -> floormod(x, 2) * 4 + lane) linear, so alignment is provable.
  bool SplitCoarseFine(const LinearSum& r, int64_t c, int64_t* k_out, LinearSum* coarse, LinearSum* fine) {
    std::vector<int64_t> candidates;
    for (const auto& t : r.terms) {
      int64_t g = AbsGcd(t.coeff, c);
      if (g > 1 && g < c) candidates.push_back(g);
    }
    std::sort(candidates.rbegin(), candidates.rend());
    for (int64_t k : candidates) {
      LinearSum co(r.dtype), fi(r.dtype);
      for (const auto& t : r.terms) {
        if (t.coeff % k == 0) {
          co.AddTerm(t.expr, t.coeff / k, t.hash);
        } else {
          fi.AddTerm(t.expr, t.coeff, t.hash);
        }
      }
      fi.constant = r.constant;
      if (co.terms.empty()) continue;
      IntBound fb = an_->Bound(FromLinear(fi));
      if (!fb.HasFiniteMin() || !fb.HasFiniteMax() || fb.min < 0 || fb.max >= k) continue;
      *k_out = k;
      *coarse = std::move(co);
      *fine = std::move(fi);
      return true;
    }
    return false;
  }

  // floordiv(a, b) for integers (floor semantics).
  Expr DivRule(const Expr& a, const Expr& b) {
    DType t = a->dtype;
    const int64_t* ca = AsConstInt(a);
    const int64_t* cb = AsConstInt(b);
    if (!cb || *cb == 0) return nullptr;  // a non-constant divisor is left to FoldByBound
    int64_t c = *cb;
    if (ca) {
      if (*ca == kInt64Min && c == -1) return nullptr;
      int64_t q = FloorDivInt(*ca, c);
      return FitsDType(q, t) ? IntImm(q, t) : nullptr;
    }
    if (c == 1) return a;
    if (c < 0) return nullptr;
    if (Expr r = NestedDiv(a, c)) return r;
    LinearSum l = ToLinear(a);
    if (!l.ok) return nullptr;
    // a = q * c + r exactly, with the terms whose coefficient c divides in q; then
    // floordiv(a, c) = q + floordiv(r, c). The constant is split truncating, to keep it small.
    LinearSum q(t), r(t);
    for (const auto& t : l.terms) {
      if (t.coeff % c == 0) {
        q.AddTerm(t.expr, t.coeff / c, t.hash);
      } else {
        r.AddTerm(t.expr, t.coeff, t.hash);
      }
    }
    q.constant = l.constant / c;
    r.constant = l.constant % c;
    // floordiv(g * r', g * c') = floordiv(r', c').
    int64_t g = c;
    for (const auto& t : r.terms) g = AbsGcd(g, t.coeff);
    g = AbsGcd(g, r.constant);
    int64_t cr = c / g;
    for (auto& t : r.terms) t.coeff /= g;
    r.constant /= g;
    if (!r.terms.empty() || r.constant != 0) {
      Expr re = FromLinear(r);
      IntBound rb = an_->Bound(re);
      LinearSum coarse(t), fine(t);
      if (cr == 1) {
        q.AddScaled(r, 1);
      } else if (rb.HasFiniteMin() && rb.HasFiniteMax() && FloorDivInt(rb.min, cr) == FloorDivInt(rb.max, cr)) {
        q.AddConst(FloorDivInt(rb.min, cr));  // r stays within one period
      } else if (int64_t k; SplitCoarseFine(r, cr, &k, &coarse, &fine)) {
        Expr ce = FromLinear(coarse);
        Expr atom = NestedDiv(ce, cr / k);
        q.Add(atom ? atom : FloorDiv(ce, IntImm(cr / k, t)), 1);
      } else {
        Expr atom = NestedDiv(re, cr);
        q.Add(atom ? atom : FloorDiv(re, IntImm(cr, t)), 1);
      }
    }
    if (!q.ok) return nullptr;
    return FromLinear(std::move(q));
  }

  // floordiv(floordiv(x, c1), c2) = floordiv(x, c1 * c2) for positive constants.
  Expr NestedDiv(const Expr& a, int64_t c) {
    const auto* inner = As<BinaryNode>(a);
    if (!inner || inner->op != BinaryOp::kFloorDiv) return nullptr;
    const int64_t* c1 = AsConstInt(inner->b);
    int64_t prod;
    if (!c1 || *c1 <= 0 || !CheckedMul(*c1, c, a->dtype, &prod)) return nullptr;
    Expr d = IntImm(prod, a->dtype);
    Expr r = DivRule(inner->a, d);
    return r ? r : FloorDiv(inner->a, d);
  }

  // floormod(a, b) for integers (floor semantics: the sign of the divisor).
  Expr ModRule(const Expr& a, const Expr& b) {
    DType t = a->dtype;
    const int64_t* ca = AsConstInt(a);
    const int64_t* cb = AsConstInt(b);
    if (!cb) {
      // 0 <= a < b: the remainder is a itself.
      IntBound ab = an_->Bound(a), bb = an_->Bound(b);
      if (ab.min >= 0 && bb.min > 0 && ab.max < bb.min) return a;
      return nullptr;
    }
    int64_t c = *cb;
    if (c == 0) return nullptr;
    if (ca) {
      if (*ca == kInt64Min && c == -1) return nullptr;
      return IntImm(FloorModInt(*ca, c), t);
    }
    if (c == 1) return IntImm(0, t);
    if (c < 0) return nullptr;
    if (Expr r = NestedMod(a, c)) return r;
    LinearSum l = ToLinear(a);
    if (!l.ok) return nullptr;
    // floormod(q * c + r, c) = floormod(r, c): drop the terms that c divides.
    LinearSum r(t);
    for (const auto& t : l.terms) {
      if (t.coeff % c != 0) r.AddTerm(t.expr, t.coeff, t.hash);
    }
    r.constant = l.constant % c;
    // floormod(g * r', g * c') = g * floormod(r', c').
    int64_t g = c;
    for (const auto& t : r.terms) g = AbsGcd(g, t.coeff);
    g = AbsGcd(g, r.constant);
    int64_t cr = c / g;
    for (auto& t : r.terms) t.coeff /= g;
    r.constant /= g;
    if (r.terms.empty() && r.constant == 0) return IntImm(0, t);
    LinearSum result(t), coarse(t), fine(t);
    Expr re = FromLinear(r);
    IntBound rb = an_->Bound(re);
    if (rb.HasFiniteMin() && rb.HasFiniteMax() && FloorDivInt(rb.min, cr) == FloorDivInt(rb.max, cr)) {
      // Within one period [m * c', (m + 1) * c'): the remainder is r' - m * c'.
      int64_t shift;
      if (!CheckedMul(-FloorDivInt(rb.min, cr), cr * g, t, &shift)) return nullptr;
      result.AddScaled(r, g);
      result.AddConst(shift);
    } else if (int64_t k; SplitCoarseFine(r, cr, &k, &coarse, &fine)) {
      Expr ce = FromLinear(coarse);
      Expr atom = NestedMod(ce, cr / k);
      result.Add(atom ? atom : FloorMod(ce, IntImm(cr / k, t)), g * k);
      result.AddScaled(fine, g);
    } else {
      Expr atom = NestedMod(re, cr);
      result.Add(atom ? atom : FloorMod(re, IntImm(cr, t)), g);
    }
    if (!result.ok) return nullptr;
    return FromLinear(std::move(result));
  }

  // floormod(floormod(x, c1), c2) = floormod(x, c2) when c2 divides c1 (positive constants).
  Expr NestedMod(const Expr& a, int64_t c) {
    const auto* inner = As<BinaryNode>(a);
    if (!inner || inner->op != BinaryOp::kFloorMod) return nullptr;
    const int64_t* c1 = AsConstInt(inner->b);
    if (!c1 || *c1 <= 0 || *c1 % c != 0) return nullptr;
    Expr d = IntImm(c, a->dtype);
    Expr r = ModRule(inner->a, d);
    return r ? r : FloorMod(inner->a, d);
  }

  Expr MinMaxRule(BinaryOp op, const Expr& a, const Expr& b) {
    const int64_t* ca = AsConstInt(a);
    const int64_t* cb = AsConstInt(b);
    bool is_min = op == BinaryOp::kMin;
    if (ca && cb) return IntImm(is_min ? std::min(*ca, *cb) : std::max(*ca, *cb), a->dtype);
    if (ExprDeepEqual(a, b)) return a;
    // Decide by the interval of a - b, which keeps the correlation between both sides.
    LinearSum d = ToLinear(a);
    d.Add(b, -1);
    if (!d.ok) return nullptr;
    IntBound db = LinearBound(d);
    if (db.max <= 0) return is_min ? a : b;
    if (db.min >= 0) return is_min ? b : a;
    return nullptr;
  }

  // Integer comparisons: decided by the interval of a - b, else put in the canonical form
  // "positive terms OP negated negative terms" with the constant on the side where it is positive
  // and the coefficients divided by their gcd.
  Expr CompareRule(BinaryOp op, const Expr& a, const Expr& b) {
    DType t = a->dtype;
    LinearSum d = ToLinear(a);
    d.Add(b, -1);
    if (!d.ok) return nullptr;
    if (auto decided = DecideAgainstZero(op, LinearBound(d))) return Bool(*decided);
    // d = g * d' + k; rewrite "d OP 0" as "d' + k2 OP 0".
    int64_t g = 0;
    for (const auto& t : d.terms) {
      if (t.coeff == kInt64Min) return nullptr;
      g = AbsGcd(g, t.coeff);
    }
    int64_t k = d.constant, k2 = k;
    if (g > 1) {
      if (k == kInt64Min) return nullptr;
      switch (op) {
        case BinaryOp::kLT:
        case BinaryOp::kGE: k2 = -CeilDivInt(-k, g); break;   // g*d' < -k  <=>  d' < ceil(-k/g)
        case BinaryOp::kLE:
        case BinaryOp::kGT: k2 = -FloorDivInt(-k, g); break;  // g*d' <= -k <=>  d' <= floor(-k/g)
        default:
          if (k % g != 0) return Bool(op == BinaryOp::kNE);   // g*d' == -k has no solution
          k2 = k / g;
          break;
      }
      for (auto& t : d.terms) t.coeff /= g;
    }
    LinearSum lhs(t), rhs(t);
    for (const auto& term : d.terms) {
      int64_t neg;
      if (term.coeff > 0) {
        lhs.AddTerm(term.expr, term.coeff, term.hash);
      } else if (CheckedNeg(term.coeff, t, &neg)) {
        rhs.AddTerm(term.expr, neg, term.hash);
      } else {
        return nullptr;
      }
    }
    int64_t neg_k2;
    if (!CheckedNeg(k2, t, &neg_k2)) return nullptr;
    if (!lhs.terms.empty() && (rhs.terms.empty() || k2 <= 0)) {
      rhs.AddConst(neg_k2);
    } else {
      lhs.AddConst(k2);
    }
    if (!lhs.ok || !rhs.ok) return nullptr;
    return MakeBinary(op, FromLinear(std::move(lhs)), FromLinear(std::move(rhs)));
  }

  Expr SimplifyNot(const Expr& a) {
    Expr r;
    if (const int64_t* c = AsConstInt(a)) {
      r = Bool(*c == 0);
    } else if (const auto* n = As<NotNode>(a)) {
      r = n->a;
    } else if (const auto* b = As<BinaryNode>(a); b && IsComparison(b->op)) {
      // Floats: only == and != are each other's negation (a NaN fails every other comparison).
      if (!IsFloat(b->a->dtype) || b->op == BinaryOp::kEQ || b->op == BinaryOp::kNE) {
        r = MakeBinary(Negate(b->op), b->a, b->b);
      }
    }
    return FoldByBound(r ? r : Not(a));
  }

  static Expr CastRule(DType t, const Expr& v) {
    if (v->dtype == t) return v;
    if (const int64_t* c = AsConstInt(v)) {
      if (t == DType::kBool) return Bool(*c != 0);
      if (IsInt(t)) return FitsDType(*c, t) ? IntImm(*c, t) : nullptr;
      double d = static_cast<double>(*c);
      return FloatImm(t == DType::kFloat32 ? static_cast<double>(static_cast<float>(d)) : d, t);
    }
    if (const auto* f = As<FloatImmNode>(v)) {
      double x = FloatValue(f);
      if (IsFloat(t)) return FloatImm(t == DType::kFloat32 ? static_cast<double>(static_cast<float>(x)) : x, t);
      if (std::isnan(x)) return nullptr;
      if (t == DType::kBool) return Bool(x != 0.0);
      // Float to integer truncates toward zero; out of range is undefined: leave it.
      double tr = std::trunc(x);
      if (!(tr >= -9.2e18 && tr <= 9.2e18) || !FitsDType(static_cast<int64_t>(tr), t)) return nullptr;
      return IntImm(static_cast<int64_t>(tr), t);
    }
    // Widening and narrowing back is the identity: cast<int32>(cast<int64>(x: int32)) -> x.
    if (const auto* inner = As<CastNode>(v)) {
      DType src = inner->value->dtype;
      if (src == t && IsInt(t) && IsInt(inner->dtype) && BytesOf(inner->dtype) >= BytesOf(t)) return inner->value;
    }
    return nullptr;
  }

  BoundAnalyzer* an_;
  // The value of each single-iteration loop's variable in the body being simplified: such a loop
  // is replaced by its body, and substituting the value into the body first copied all of it.
  std::unordered_map<const VarNode*, Expr> single_;
  // Results of binary nodes under the bindings of `epoch`; `node` keeps the key's address from
  // being reused by another node while the entry exists.
  struct Memo {
    uint64_t epoch;
    Expr node;
    Expr result;
  };
  uint64_t epoch_ = 0;
  std::unordered_map<const BinaryNode*, Memo> memo_;
};

}  // namespace

Expr Simplify(const Expr& e, BoundAnalyzer* analyzer) {
  BoundAnalyzer local;
  Simplifier s(analyzer ? analyzer : &local);
  return s.Mutate(e);
}

Stmt Simplify(const Stmt& st, BoundAnalyzer* analyzer) {
  BoundAnalyzer local;
  Simplifier s(analyzer ? analyzer : &local);
  return s.Mutate(st);
}

}  // namespace autotune::tir
