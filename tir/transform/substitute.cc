#include "tir/transform/substitute.h"

#include "support/check.h"
#include "tir/functor.h"

namespace autotune::tir {
namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const std::function<Expr(const VarNode*)>& fn) : fn_(fn) {}

  Expr Mutate_(const VarNode* op, const Expr& self) override {
    Expr r = fn_(op);
    if (!r) return self;
    AUTOTUNE_CHECK(r->dtype == op->dtype, "substitution changes a variable's dtype");
    return r;
  }

 private:
  const std::function<Expr(const VarNode*)>& fn_;
};

std::function<Expr(const VarNode*)> FromMap(const std::unordered_map<const VarNode*, Expr>& map) {
  return [&map](const VarNode* v) -> Expr {
    auto it = map.find(v);
    return it == map.end() ? nullptr : it->second;
  };
}

}  // namespace

Expr Substitute(const Expr& e, const std::function<Expr(const VarNode*)>& fn) { return Substituter(fn).Mutate(e); }
Stmt Substitute(const Stmt& s, const std::function<Expr(const VarNode*)>& fn) { return Substituter(fn).Mutate(s); }

Expr Substitute(const Expr& e, const std::unordered_map<const VarNode*, Expr>& map) {
  if (map.empty()) return e;
  return Substitute(e, FromMap(map));
}
Stmt Substitute(const Stmt& s, const std::unordered_map<const VarNode*, Expr>& map) {
  if (map.empty()) return s;
  return Substitute(s, FromMap(map));
}

}  // namespace autotune::tir
