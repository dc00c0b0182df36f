#include "tir/functor.h"

namespace autotune::tir {

void IRVisitor::Visit(const Expr& e) {
  AUTOTUNE_CHECK(e, "visiting a null expression");
  switch (e->kind) {
#define AUTOTUNE_X(n)    \
  case ExprKind::k##n: \
    return Visit_(static_cast<const n##Node*>(e.get()));
    AUTOTUNE_EXPR_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
  }
}

void IRVisitor::Visit(const Stmt& s) {
  AUTOTUNE_CHECK(s, "visiting a null statement");
  switch (s->kind) {
#define AUTOTUNE_X(n)    \
  case StmtKind::k##n: \
    return Visit_(static_cast<const n##Node*>(s.get()));
    AUTOTUNE_STMT_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
  }
}

Expr IRMutator::Mutate(const Expr& e) {
  Expr r = Dispatch(e);
  return r ? r : e;
}

Stmt IRMutator::Mutate(const Stmt& s) {
  Stmt r = Dispatch(s);
  return r ? r : s;
}

Expr IRMutator::Dispatch(const Expr& e) {
  AUTOTUNE_CHECK(e, "mutating a null expression");
  switch (e->kind) {
#define AUTOTUNE_X(n)    \
  case ExprKind::k##n: \
    return Mutate_(static_cast<const n##Node*>(e.get()), e);
    AUTOTUNE_EXPR_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
  }
  return e;
}

Stmt IRMutator::Dispatch(const Stmt& s) {
  AUTOTUNE_CHECK(s, "mutating a null statement");
  switch (s->kind) {
#define AUTOTUNE_X(n)    \
  case StmtKind::k##n: \
    return Mutate_(static_cast<const n##Node*>(s.get()), s);
    AUTOTUNE_STMT_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
  }
  return s;
}

}  // namespace autotune::tir
