#include "tir/lower/region.h"

#include <algorithm>
#include <vector>

#include "tir/analysis/expr_uses.h"
#include "tir/functor.h"
#include "tir/transform/linear_form.h"
#include "tir/transform/simplify.h"

namespace autotune::tir {

namespace {

// An extent no dimension has: the caller then takes the whole dimension.
constexpr int64_t kWholeDimension = int64_t{1} << 40;

// The index as a linear form; one whose coefficients overflow is a single opaque term.
LinearSum Decompose(const Expr& e) {
  LinearSum l = ToLinear(e);
  if (l.ok) return l;
  LinearSum whole(e->dtype);
  whole.AddTerm(e, 1);
  return whole;
}

// Whether e is provably a multiple of c: every coefficient and the constant of its linear form are.
bool MultipleOf(const Expr& e, int64_t c) {
  const LinearSum lin = Decompose(e);
  if (lin.constant % c != 0) return false;
  for (const auto& term : lin.terms) {
    if (term.coeff % c != 0) return false;
  }
  return true;
}

bool HasDivisionTerm(const LinearSum& lin) {
  return std::any_of(lin.terms.begin(), lin.terms.end(), [](const LinearSum::Term& t) {
    const auto* b = As<BinaryNode>(t.expr);
    return b && (b->op == BinaryOp::kFloorDiv || b->op == BinaryOp::kFloorMod);
  });
}

}  // namespace

IndexRange EvalIndexRange(const Expr& index, const std::unordered_map<const VarNode*, LoopRange>& loops) {
  // Digits of a fused index (a matrix form's output read back at a convolution's coordinates) are
  // simplified back together first, so they are one term, not three bounded apart.
  LinearSum lin = Decompose(index);
  if (HasDivisionTerm(lin)) lin = Decompose(Simplify(index));
  Expr fixed = IntImm(lin.constant, index->dtype);
  int64_t lo = 0, hi = 0;
  for (const LinearSum::Term& t : lin.terms) {
    const Expr& term = t.expr;
    const int64_t coef = t.coeff;
    const std::vector<const VarNode*> vars = VarsIn(term);
    bool any_relaxed = false, any_fixed = false;
    for (const VarNode* v : vars) {
      auto it = loops.find(v);
      (it != loops.end() && it->second.relaxed ? any_relaxed : any_fixed) = true;
    }
    if (!any_relaxed) {
      fixed = Add(fixed, Mul(term, IntImm(coef, index->dtype)));
      continue;
    }
    // floordiv(x, c) of an x that mixes fixed and relaxed variables (a grouped convolution's input
    // channel floordiv(k, K / groups) * (C / groups) + rc, with k's block part fixed): x's own range
    // [m, m + e) gives floordiv(m, c) and at most ceil((e - 1) / c) + 1 values, where bounding x over
    // every variable would take every group.
    if (const auto* div = As<BinaryNode>(term); div && div->op == BinaryOp::kFloorDiv && any_fixed && coef > 0) {
      const int64_t* c = AsConstInt(div->b);
      if (c && *c > 0) {
        const IndexRange x = EvalIndexRange(div->a, loops);
        if (x.extent < kWholeDimension) {
          // Quotients covered: ceil(e / c) when m is a multiple of c, else one more at most.
          const int64_t values = MultipleOf(x.min, *c) ? (x.extent + *c - 1) / *c : (x.extent - 1 + *c - 1) / *c + 1;
          fixed = Add(fixed, Mul(FloorDiv(x.min, IntImm(*c, index->dtype)), IntImm(coef, index->dtype)));
          hi += (values - 1) * coef;
          continue;
        }
      }
    }
    // Bound the term with every variable over its range (exact for a relaxed variable alone).
    BoundAnalyzer an;
    bool bounded = true;
    for (const VarNode* v : vars) {
      auto it = loops.find(v);
      if (it == loops.end()) {
        bounded = false;
        break;
      }
      an.Bind(it->second.var, 0, it->second.extent);
    }
    IntBound b = bounded ? an.Bound(term) : IntBound::Unknown();
    if (!b.HasFiniteMin() || !b.HasFiniteMax()) {
      // Cannot bound it: the caller clamps to the whole dimension.
      return IndexRange{IntImm(0, index->dtype), kWholeDimension};
    }
    int64_t a = b.min * coef, c = b.max * coef;
    lo += std::min(a, c);
    hi += std::max(a, c);
  }
  return IndexRange{Simplify(Add(fixed, IntImm(lo, index->dtype))), hi - lo + 1};
}

std::optional<IndexRange> UnionRange(const IndexRange& a, const IndexRange& b) {
  Expr diff = Simplify(Sub(b.min, a.min));
  const int64_t* d = AsConstInt(diff);
  if (!d) return std::nullopt;
  // b starts d after a.
  int64_t start = std::min<int64_t>(0, *d);
  int64_t end = std::max<int64_t>(a.extent, *d + b.extent);
  return IndexRange{start == 0 ? a.min : b.min, end - start};
}

}  // namespace autotune::tir
