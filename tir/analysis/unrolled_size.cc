#include "tir/analysis/unrolled_size.h"

#include <algorithm>
#include <limits>

#include "tir/functor.h"

namespace autotune::tir {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 4;

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kMax : std::min(r, kMax);
}

class Counter : public IRVisitor {
 public:
  int64_t count = 0;

  void Visit_(const ForNode* op) override {
    const int64_t* extent = AsConstInt(op->extent);
    if (op->for_kind != ForKind::kUnrolled || !extent || *extent <= 1) {
      Visit(op->body);
      return;
    }
    Counter body;
    body.Visit(op->body);
    count = std::min(kMax, count + SaturatingMul(body.count, *extent));
  }
  void Visit_(const BufferStoreNode*) override { ++count; }
  void Visit_(const BarrierNode*) override { ++count; }
};

}  // namespace

int64_t UnrolledStatementCount(const Stmt& s) {
  if (!s) return 0;
  Counter c;
  c.Visit(s);
  return c.count;
}

}  // namespace autotune::tir
