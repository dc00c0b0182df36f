#include "tir/analysis/thread_dependence.h"

#include "tir/buffer.h"
#include "tir/functor.h"

namespace autotune::tir {

namespace {
class Finder : public IRVisitor {
 public:
  Finder(const std::unordered_set<const VarNode*>& vars, LoadDependence loads) : vars_(vars), loads_(loads) {}
  bool found = false;
  void Visit_(const VarNode* op) override { found |= vars_.count(op) > 0; }
  void Visit_(const BufferLoadNode* op) override {
    found |= loads_ == LoadDependence::kAnyLoad || op->buffer->scope == Scope::kLocal;
    VisitFields(op);
  }

 private:
  const std::unordered_set<const VarNode*>& vars_;
  LoadDependence loads_;
};
}  // namespace

bool IsThreadDependent(const Expr& e, const std::unordered_set<const VarNode*>& thread_vars, LoadDependence loads) {
  if (!e) return false;
  Finder f(thread_vars, loads);
  f.Visit(e);
  return f.found;
}

}  // namespace autotune::tir
