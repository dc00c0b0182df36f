#include "tir/analysis/expr_uses.h"

#include <algorithm>

#include "tir/functor.h"

namespace autotune::tir {
namespace {

class UseCollector : public IRVisitor {
 public:
  std::vector<const VarNode*> vars;
  std::vector<const BufferLoadNode*> loads;
  void Visit_(const VarNode* op) override {
    if (std::find(vars.begin(), vars.end(), op) == vars.end()) vars.push_back(op);
  }
  void Visit_(const BufferLoadNode* op) override {
    if (std::find(loads.begin(), loads.end(), op) == loads.end()) loads.push_back(op);
    VisitFields(op);
  }
};

}  // namespace

std::vector<const VarNode*> VarsIn(const Expr& e) {
  UseCollector c;
  if (e) c.Visit(e);
  return c.vars;
}

std::vector<const BufferLoadNode*> LoadsIn(const Expr& e) {
  UseCollector c;
  if (e) c.Visit(e);
  return c.loads;
}

}  // namespace autotune::tir
