#include "tir/transform/linear_form.h"

#include <algorithm>
#include <functional>
#include <string>

#include "tir/int_arith.h"
#include "tir/structural_equal.h"

namespace autotune::tir {

namespace {

size_t Mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

// The hash of a compound node from `h` (its kind and type) and its fields' (TermHash caches it).
size_t CompoundHash(const Expr& e, size_t h) {
  switch (e->kind) {
    case ExprKind::kBinary: {
      const auto* b = As<BinaryNode>(e);
      return Mix(Mix(Mix(h, static_cast<size_t>(b->op)), TermHash(b->a)), TermHash(b->b));
    }
    case ExprKind::kNot: return Mix(h, TermHash(As<NotNode>(e)->a));
    case ExprKind::kCast: return Mix(h, TermHash(As<CastNode>(e)->value));
    case ExprKind::kBufferLoad: {
      const auto* l = As<BufferLoadNode>(e);
      h = Mix(h, std::hash<const void*>()(l->buffer.get()));
      for (const auto& i : l->indices) h = Mix(h, TermHash(i));
      return h;
    }
    case ExprKind::kCall: {
      const auto* c = As<CallNode>(e);
      h = Mix(h, std::hash<std::string>()(c->name));
      for (const auto& a : c->args) h = Mix(h, TermHash(a));
      return h;
    }
    default: return h;  // rare as terms: the kind is enough
  }
}

}  // namespace

size_t TermHash(const Expr& e) {
  const size_t base = Mix(static_cast<size_t>(e->kind), static_cast<size_t>(e->dtype));
  switch (e->kind) {
    case ExprKind::kIntImm: return Mix(base, static_cast<size_t>(As<IntImmNode>(e)->value));
    case ExprKind::kVar: return Mix(base, std::hash<const void*>()(e.get()));
    default: break;
  }
  // Terms are compared often and their subtrees are deep (floormod(floordiv(sum, c), d)).
  if (const size_t cached = e->term_hash.Get()) return cached;
  const size_t h = std::max<size_t>(CompoundHash(e, base), 1);  // 0 marks "not computed"
  e->term_hash.Set(h);
  return h;
}

void LinearSum::AddConst(int64_t c) { ok = ok && CheckedAdd(constant, c, dtype, &constant); }

void LinearSum::AddTerm(const Expr& t, int64_t c, size_t hash) {
  if (!ok || c == 0) return;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].hash != hash || !ExprDeepEqual(terms[i].expr, t)) continue;
    ok = CheckedAdd(terms[i].coeff, c, dtype, &terms[i].coeff);
    if (ok && terms[i].coeff == 0) terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
  if (terms.empty()) terms.reserve(8);  // index sums have a few terms: one allocation, not four
  terms.push_back({t, c, hash});
}

void LinearSum::Add(const Expr& e, int64_t scale) {
  if (!ok) return;
  if (const int64_t* c = AsConstInt(e)) {
    int64_t v;
    ok = CheckedMul(*c, scale, dtype, &v);
    AddConst(v);
    return;
  }
  if (const auto* b = As<BinaryNode>(e)) {
    int64_t s;
    switch (b->op) {
      case BinaryOp::kAdd:
        Add(b->a, scale);
        Add(b->b, scale);
        return;
      case BinaryOp::kSub:
        Add(b->a, scale);
        if (!CheckedNeg(scale, dtype, &s)) {
          ok = false;
          return;
        }
        Add(b->b, s);
        return;
      case BinaryOp::kMul:
        if (const int64_t* c = AsConstInt(b->b)) {
          ok = CheckedMul(scale, *c, dtype, &s);
          Add(b->a, s);
          return;
        }
        if (const int64_t* c = AsConstInt(b->a)) {
          ok = CheckedMul(scale, *c, dtype, &s);
          Add(b->b, s);
          return;
        }
        break;
      case BinaryOp::kFloorDiv:  // floordiv(x, 1), e.g. a depthwise channel floordiv(k, K / groups)
        if (const int64_t* c = AsConstInt(b->b); c && *c == 1) {
          Add(b->a, scale);
          return;
        }
        break;
      default: break;
    }
  }
  AddTerm(e, scale);
}

void LinearSum::AddScaled(const LinearSum& o, int64_t scale) {
  for (const auto& t : o.terms) {
    int64_t v;
    if (!CheckedMul(t.coeff, scale, dtype, &v)) {
      ok = false;
      return;
    }
    AddTerm(t.expr, v, t.hash);
  }
  int64_t v;
  if (!CheckedMul(o.constant, scale, dtype, &v)) {
    ok = false;
    return;
  }
  AddConst(v);
}

LinearSum ToLinear(const Expr& e, int64_t scale) {
  LinearSum l(e->dtype);
  l.Add(e, scale);
  return l;
}

}  // namespace autotune::tir
