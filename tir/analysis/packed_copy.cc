#include "tir/analysis/packed_copy.h"

#include "tir/analysis/expr_uses.h"
#include "tir/functor.h"
#include "tir/transform/linear_form.h"

namespace autotune::tir {
namespace {

bool IsZero(const Expr& e) {
  const auto* c = As<CastNode>(e);
  const auto* f = As<FloatImmNode>(c ? c->value : e);
  return f && f->value == 0.0;
}

// Whether `cond` has one value for all `width` lanes of v: its parts either do not use v or
// compare an aligned `base + v` with a multiple of the width (a padded copy's bound).
bool LaneUniform(const Expr& cond, const VarNode* v, int64_t width) {
  if (!UsesVar(cond, v)) return true;
  const auto* b = As<BinaryNode>(cond);
  if (!b) return false;
  if (b->op == BinaryOp::kAnd) return LaneUniform(b->a, v, width) && LaneUniform(b->b, v, width);
  const int64_t* bound = AsConstInt(b->b);
  return (b->op == BinaryOp::kLT || b->op == BinaryOp::kGE) && bound && *bound % width == 0 && !UsesVar(b->b, v) &&
         AlignedUnitStride(b->a, v, width);
}

}  // namespace

LinearForm LinearIn(const Expr& index, const VarNode* v) {
  const LinearSum sum = ToLinear(index);
  LinearForm f;
  f.ok = sum.ok;
  f.constant = sum.constant;
  for (const auto& term : sum.terms) {
    if (term.expr.get() == v) {
      f.coef += term.coeff;
    } else if (UsesVar(term.expr, v)) {
      f.ok = false;
    } else {
      f.term_coefs.push_back(term.coeff);
    }
  }
  return f;
}

bool UnitStride(const Expr& index, const VarNode* v) {
  const LinearForm f = LinearIn(index, v);
  return f.ok && f.coef == 1;
}

bool AlignedUnitStride(const Expr& index, const VarNode* v, int64_t width) {
  const LinearForm f = LinearIn(index, v);
  if (!f.ok || f.coef != 1 || f.constant % width != 0) return false;
  for (int64_t c : f.term_coefs) {
    if (c % width != 0) return false;
  }
  return true;
}

std::pair<Expr, Expr> ZeroPadding(const Expr& value) {
  Expr cond, inner = value;
  for (const auto* s = As<SelectNode>(inner); s && IsZero(s->false_value); s = As<SelectNode>(inner)) {
    cond = cond ? And(cond, s->cond) : s->cond;
    inner = s->true_value;
  }
  return {cond, inner};
}

std::optional<PackedCopy> MatchPackedCopy(const ForNode* op) {
  const int64_t* n = AsConstInt(op->extent);
  const VarNode* v = op->var.get();
  if (!n || (*n != 2 && *n != 4 && *n != 8) || !IsConstInt(op->min, 0)) return std::nullopt;
  const auto* guard = As<IfThenElseNode>(op->body);
  if (guard && ((guard->else_case && !IsEmptyStmt(guard->else_case)) || UsesVar(guard->cond, v))) return std::nullopt;
  const auto* st = As<BufferStoreNode>(guard ? guard->then_case : op->body);
  if (!st) return std::nullopt;
  const auto [inside, value] = ZeroPadding(st->value);
  if (inside && !LaneUniform(inside, v, *n)) return std::nullopt;
  const auto* src = As<BufferLoadNode>(value);
  // float32: only zero-padded copies (plain ones are float2/float4 vector accesses).
  const DType elem = st->buffer->dtype;
  if (!src || !(IsHalf(elem) || (elem == DType::kFloat32 && *n <= 4 && inside)) || src->buffer->dtype != elem ||
      st->indices.size() != 1 || src->indices.size() != 1 || st->buffer->scope == Scope::kLocal ||
      src->buffer->scope == Scope::kLocal || !AlignedUnitStride(st->indices[0], v, *n) ||
      !AlignedUnitStride(src->indices[0], v, *n)) {
    return std::nullopt;
  }
  return PackedCopy{guard, st, src, inside, *n};
}

}  // namespace autotune::tir
