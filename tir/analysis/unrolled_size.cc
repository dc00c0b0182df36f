#include "tir/analysis/unrolled_size.h"

#include <algorithm>
#include <limits>

#include "tir/functor.h"

namespace autotune::tir {
namespace {

constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max() / 4;

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kMaxCount : std::min(r, kMaxCount);
}

class Counter : public IRVisitor {
 public:
  explicit Counter(LoopExpanded expanded) : expanded_(expanded) {}
  int64_t count = 0;

  void Visit_(const ForNode* op) override {
    const int64_t* extent = AsConstInt(op->extent);
    if (!extent || *extent <= 1 || !expanded_(op)) {
      Visit(op->body);
      return;
    }
    Counter body(expanded_);
    body.Visit(op->body);
    count = std::min(kMaxCount, count + SaturatingMul(body.count, *extent));
  }
  void Visit_(const BufferStoreNode*) override { ++count; }
  void Visit_(const BarrierNode*) override { ++count; }
  // A tensorized tile is emitted as a few statements per lane (one mma or ldmatrix, a lane's share
  // of a fill or store), not as its loops.
  void Visit_(const TensorizeNode*) override { count += 4; }

 private:
  LoopExpanded expanded_;
};

}  // namespace

bool MarkedUnrolled(const ForNode* loop) { return loop->for_kind == ForKind::kUnrolled; }

int64_t UnrolledStatementCount(const Stmt& s, LoopExpanded expanded) {
  if (!s) return 0;
  Counter c(expanded);
  c.Visit(s);
  return c.count;
}

}  // namespace autotune::tir
