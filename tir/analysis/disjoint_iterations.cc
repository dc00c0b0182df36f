#include "tir/analysis/disjoint_iterations.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>
#include <vector>

#include "tir/analysis/expr_uses.h"
#include "tir/functor.h"
#include "tir/transform/linear_form.h"

namespace autotune::tir {
namespace {

// The stores of one buffer, and the loops inside the body (bound to their ranges in `bounds`).
class BodyScan : public IRVisitor {
 public:
  BodyScan(const BufferNode* buffer, BoundAnalyzer bounds, std::unordered_set<const VarNode*> varying)
      : bounds(std::move(bounds)), varying(std::move(varying)), buffer_(buffer) {}
  BoundAnalyzer bounds;
  std::unordered_set<const VarNode*> varying;
  std::vector<const BufferStoreNode*> stores;
  bool bounded = true;  // every inner loop has constant bounds

  void Visit_(const ForNode* op) override {
    const int64_t* min = AsConstInt(op->min);
    const int64_t* extent = AsConstInt(op->extent);
    if (min && extent) {
      bounds.Bind(op->var, *min, *extent);
    } else {
      bounded = false;
    }
    varying.insert(op->var.get());
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    if (op->buffer.get() == buffer_) stores.push_back(op);
    VisitFields(op);
  }

 private:
  const BufferNode* buffer_;
};

// The range [lo, hi] of coeff * e; nothing when it is unbounded or overflows.
std::optional<std::pair<int64_t, int64_t>> Scaled(int64_t coeff, const IntBound& b) {
  if (!b.HasFiniteMin() || !b.HasFiniteMax()) return std::nullopt;
  int64_t x = 0, y = 0;
  if (__builtin_mul_overflow(coeff, b.min, &x) || __builtin_mul_overflow(coeff, b.max, &y)) return std::nullopt;
  return std::make_pair(std::min(x, y), std::max(x, y));
}

}  // namespace

bool IterationsStoreApart(const ForNode& loop, const BufferNode* buffer, const BoundAnalyzer& outer,
                          const std::unordered_set<const VarNode*>& varying) {
  BodyScan scan(buffer, outer, varying);
  scan.Visit(loop.body);
  if (!scan.bounded || scan.stores.empty()) return false;
  int64_t step = 0;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const BufferStoreNode* st : scan.stores) {
    if (st->indices.size() != 1) return false;
    const LinearSum sum = ToLinear(st->indices[0]);
    if (!sum.ok) return false;
    int64_t c = 0, first = sum.constant, last = sum.constant;
    for (const auto& term : sum.terms) {
      if (term.expr.get() == loop.var.get()) {
        c = term.coeff;
        continue;
      }
      const std::vector<const VarNode*> vars = VarsIn(term.expr);
      if (std::find(vars.begin(), vars.end(), loop.var.get()) != vars.end()) return false;  // not linear in it
      const bool varies = std::any_of(vars.begin(), vars.end(), [&](const VarNode* v) { return scan.varying.count(v) > 0; });
      if (!varies) continue;  // the same in every iteration and thread
      const auto range = Scaled(term.coeff, scan.bounds.Bound(term.expr));
      if (!range || __builtin_add_overflow(first, range->first, &first) || __builtin_add_overflow(last, range->second, &last)) {
        return false;
      }
    }
    if (c == 0 || (step != 0 && c != step)) return false;
    step = c;
    lo = std::min(lo, first);
    hi = std::max(hi, last);
  }
  int64_t span = 0;
  if (__builtin_sub_overflow(hi, lo, &span)) return false;
  return span < std::abs(step);
}

}  // namespace autotune::tir
