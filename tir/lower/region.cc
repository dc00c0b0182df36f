#include "tir/lower/region.h"

#include <algorithm>
#include <vector>

#include "tir/analysis/expr_uses.h"
#include "tir/functor.h"
#include "tir/transform/simplify.h"

namespace autotune::tir {

namespace {

// sum(coef * term) + constant; terms are variables or opaque sub-expressions.
struct Linear {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void AddTerm(const Expr& t, int64_t c) {
    for (auto& [e, k] : terms) {
      if (e == t) {
        k += c;
        return;
      }
    }
    terms.emplace_back(t, c);
  }
  void AddScaled(const Linear& o, int64_t s) {
    for (const auto& [e, k] : o.terms) AddTerm(e, k * s);
    constant += o.constant * s;
  }
};

Linear Decompose(const Expr& e) {
  Linear out;
  if (const int64_t* c = AsConstInt(e)) {
    out.constant = *c;
    return out;
  }
  if (const auto* b = As<BinaryNode>(e)) {
    if (b->op == BinaryOp::kAdd || b->op == BinaryOp::kSub) {
      out = Decompose(b->a);
      out.AddScaled(Decompose(b->b), b->op == BinaryOp::kAdd ? 1 : -1);
      return out;
    }
    if (b->op == BinaryOp::kMul) {
      Linear x = Decompose(b->a), y = Decompose(b->b);
      if (y.terms.empty()) {
        out.AddScaled(x, y.constant);
        return out;
      }
      if (x.terms.empty()) {
        out.AddScaled(y, x.constant);
        return out;
      }
    }
  }
  out.AddTerm(e, 1);
  return out;
}

}  // namespace

IndexRange EvalIndexRange(const Expr& index, const std::unordered_map<const VarNode*, LoopRange>& loops) {
  Linear lin = Decompose(index);
  Expr fixed = IntImm(lin.constant, index->dtype);
  int64_t lo = 0, hi = 0;
  for (const auto& [term, coef] : lin.terms) {
    if (coef == 0) continue;
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
      return IndexRange{IntImm(0, index->dtype), int64_t{1} << 40};
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
