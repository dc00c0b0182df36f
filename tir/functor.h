// Generic visitor and mutator over expressions and statements, generated from the node lists. The
// default of every Visit_/Mutate_ walks the node's reflected fields, so a pass overrides only the
// nodes it cares about.
#pragma once

#include <type_traits>
#include <utility>

#include "tir/check.h"
#include "tir/expr.h"
#include "tir/stmt.h"

namespace autotune::tir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  void Visit(const Expr& e);
  void Visit(const Stmt& s);

#define AUTOTUNE_X(n) virtual void Visit_(const n##Node* op) { VisitFields(op); }
  AUTOTUNE_EXPR_NODES(AUTOTUNE_X)
  AUTOTUNE_STMT_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X

  // Buffers are not visited by default; passes that care about buffer shapes override this.
  virtual void VisitBuffer(const Buffer&) {}

 protected:
  template <class N>
  void VisitFields(const N* op) {
    std::apply([this](const auto&... f) { (VisitField(f), ...); }, op->Fields());
  }

 private:
  void VisitField(const Expr& e) { if (e) Visit(e); }
  void VisitField(const Var& v) { if (v) Visit(Expr(v)); }
  void VisitField(const Stmt& s) { if (s) Visit(s); }
  void VisitField(const Buffer& b) { if (b) VisitBuffer(b); }
  template <class T>
  void VisitField(const std::vector<T>& v) { for (const auto& x : v) VisitField(x); }
  template <class T>
  void VisitField(const T&) {}
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  Expr Mutate(const Expr& e);
  Stmt Mutate(const Stmt& s);

#define AUTOTUNE_X(n) virtual Expr Mutate_(const n##Node* op, const Expr& self) { return MutateFields(op, self); }
  AUTOTUNE_EXPR_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
#define AUTOTUNE_X(n) virtual Stmt Mutate_(const n##Node* op, const Stmt& self) { return MutateFields(op, self); }
  AUTOTUNE_STMT_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X

  // Buffers and variable definitions are kept by default; passes that rewrite them override these.
  virtual Buffer MutateBuffer(const Buffer& b) { return b; }

 protected:
  // Rebuilds `op` with mutated fields; returns `self` unchanged (sharing the node) when nothing changed.
  template <class N, class Ref>
  Ref MutateFields(const N* op, const Ref& self) {
    N copy(*op);
    bool changed = false;
    std::apply([&](auto&... f) { ((changed |= MutateField(f)), ...); }, copy.Fields());
    if (!changed) return self;
    return std::make_shared<N>(std::move(copy));
  }

 private:
  bool MutateField(Expr& e) {
    if (!e) return false;
    Expr n = Mutate(e);
    bool changed = n != e;
    e = std::move(n);
    return changed;
  }
  bool MutateField(Stmt& s) {
    if (!s) return false;
    Stmt n = Mutate(s);
    bool changed = n != s;
    s = std::move(n);
    return changed;
  }
  bool MutateField(Buffer& b) {
    if (!b) return false;
    Buffer n = MutateBuffer(b);
    bool changed = n != b;
    b = std::move(n);
    return changed;
  }
  bool MutateField(Var&) { return false; }
  template <class T>
  bool MutateField(std::vector<T>& v) {
    bool changed = false;
    for (auto& x : v) changed |= MutateField(x);
    return changed;
  }
  template <class T>
  bool MutateField(T&) { return false; }
};


}  // namespace autotune::tir
