#include "tir/transform/linear_form.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "tir/int_arith.h"
#include "tir/structural_equal.h"

namespace autotune::tir {

size_t TermHash(const Expr& e) {
  auto mix = [](size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); };
  size_t h = mix(static_cast<size_t>(e->kind), static_cast<size_t>(e->dtype));
  switch (e->kind) {
    case ExprKind::kIntImm: return mix(h, static_cast<size_t>(As<IntImmNode>(e)->value));
    case ExprKind::kVar: return mix(h, std::hash<const void*>()(e.get()));
    case ExprKind::kBinary: {
      const auto* b = As<BinaryNode>(e);
      return mix(mix(mix(h, static_cast<size_t>(b->op)), TermHash(b->a)), TermHash(b->b));
    }
    case ExprKind::kNot: return mix(h, TermHash(As<NotNode>(e)->a));
    case ExprKind::kCast: return mix(h, TermHash(As<CastNode>(e)->value));
    case ExprKind::kBufferLoad: {
      const auto* l = As<BufferLoadNode>(e);
      h = mix(h, std::hash<const void*>()(l->buffer.get()));
      for (const auto& i : l->indices) h = mix(h, TermHash(i));
      return h;
    }
    case ExprKind::kCall: {
      const auto* c = As<CallNode>(e);
      h = mix(h, std::hash<std::string>()(c->name));
      for (const auto& a : c->args) h = mix(h, TermHash(a));
      return h;
    }
    default: return h;  // rare as terms: the kind is enough
  }
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

namespace {

// x and c of floordiv(x, c) or floormod(x, c) with a constant c > 0.
const BinaryNode* DivModBy(const Expr& e, BinaryOp op, int64_t* c) {
  const auto* b = As<BinaryNode>(e);
  const int64_t* k = b && b->op == op ? AsConstInt(b->b) : nullptr;
  if (!k || *k <= 0) return nullptr;
  *c = *k;
  return b;
}

// The expression and coefficient that a floordiv term and a floormod term make together, when they
// are the two parts of one index (RecombineDivMod).
std::optional<std::pair<Expr, int64_t>> Whole(const LinearSum::Term& div_term, const LinearSum::Term& mod_term) {
  int64_t c = 0, m = 0;
  const BinaryNode* div = DivModBy(div_term.expr, BinaryOp::kFloorDiv, &c);
  const BinaryNode* mod = DivModBy(mod_term.expr, BinaryOp::kFloorMod, &m);
  int64_t div_coeff = 0;
  if (!div || !mod || __builtin_mul_overflow(mod_term.coeff, m, &div_coeff) || div_term.coeff != div_coeff) {
    return std::nullopt;
  }
  if (c == m && ExprDeepEqual(div->a, mod->a)) return std::make_pair(div->a, mod_term.coeff);
  int64_t c1 = 0, outer = 0;  // floormod(floordiv(x, c1), m) beside floordiv(x, c1 * m)
  const BinaryNode* inner = DivModBy(mod->a, BinaryOp::kFloorDiv, &c1);
  if (inner && !__builtin_mul_overflow(c1, m, &outer) && outer == c && ExprDeepEqual(inner->a, div->a)) {
    return std::make_pair(mod->a, mod_term.coeff);
  }
  return std::nullopt;
}

}  // namespace

LinearSum RecombineDivMod(LinearSum sum) {
  for (bool changed = true; changed && sum.ok;) {
    changed = false;
    for (size_t i = 0; i < sum.terms.size() && !changed; ++i) {
      for (size_t j = 0; j < sum.terms.size() && !changed; ++j) {
        if (i == j) continue;
        auto whole = Whole(sum.terms[i], sum.terms[j]);
        if (!whole) continue;
        LinearSum next(sum.dtype);
        next.AddConst(sum.constant);
        for (size_t k = 0; k < sum.terms.size(); ++k) {
          if (k != i && k != j) next.AddTerm(sum.terms[k].expr, sum.terms[k].coeff, sum.terms[k].hash);
        }
        next.Add(whole->first, whole->second);
        sum = std::move(next);
        changed = true;
      }
    }
  }
  return sum;
}

}  // namespace autotune::tir
