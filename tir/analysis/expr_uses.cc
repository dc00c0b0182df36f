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

class VarUse : public IRVisitor {
 public:
  explicit VarUse(const VarNode* v) : v_(v) {}
  bool found = false;
  void Visit_(const VarNode* op) override { found |= op == v_; }

 private:
  const VarNode* v_;
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

bool UsesVar(const Expr& e, const VarNode* v) {
  VarUse u(v);
  u.Visit(e);
  return u.found;
}

bool UsesVar(const Stmt& s, const VarNode* v) {
  VarUse u(v);
  u.Visit(s);
  return u.found;
}

}  // namespace autotune::tir
