#include "tir/analysis/barriers.h"

#include "tir/functor.h"

namespace autotune::tir {
namespace {

class BarrierFinder : public IRVisitor {
 public:
  bool found = false;
  void Visit_(const BarrierNode*) override { found = true; }
  // Expressions hold no barriers: skip them.
#define AUTOTUNE_X(n) \
  void Visit_(const n##Node*) override {}
  AUTOTUNE_X(IntImm)
  AUTOTUNE_X(FloatImm)
  AUTOTUNE_X(Var)
  AUTOTUNE_X(Binary)
  AUTOTUNE_X(Not)
  AUTOTUNE_X(Select)
  AUTOTUNE_X(Cast)
  AUTOTUNE_X(BufferLoad)
  AUTOTUNE_X(Call)
  AUTOTUNE_X(Reduce)
#undef AUTOTUNE_X
};

class ShuffleFinder : public IRVisitor {
 public:
  bool found = false;
  void Visit_(const CallNode* op) override {
    found |= IsShuffleXor(op);
    VisitFields(op);
  }
};

}  // namespace

template <typename Node>
bool HasShuffle(const Node& n) {
  if (!n) return false;
  ShuffleFinder f;
  f.Visit(n);
  return f.found;
}

bool ContainsShuffle(const Stmt& s) { return HasShuffle(s); }
bool ContainsShuffle(const Expr& e) { return HasShuffle(e); }

bool ContainsBarrier(const Stmt& s) {
  if (!s) return false;
  BarrierFinder f;
  f.Visit(s);
  return f.found;
}

}  // namespace autotune::tir
