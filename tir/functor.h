// Generic visitor and mutator over expressions and statements, generated from the node lists. The
// default of every Visit_/Mutate_ walks the node's reflected fields, so a pass overrides only the
// nodes it cares about.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/check.h"
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
    // [&], not [this]: for a node without fields nothing is used (clang warns).
    std::apply([&](const auto&... f) { (VisitField(f), ...); }, op->Fields());
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

  // A Mutate_ returns the rewritten node, `self` when nothing changed, or null for "unchanged" (what
  // the defaults return: handing back a copy of `self` cost two atomic reference-count updates per
  // node visited, contended between the search's threads on nodes the schedules share).
#define AUTOTUNE_X(n) virtual Expr Mutate_(const n##Node* op, const Expr&) { return ChangedFields(op); }
  AUTOTUNE_EXPR_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
#define AUTOTUNE_X(n) virtual Stmt Mutate_(const n##Node* op, const Stmt&) { return ChangedFields(op); }
  AUTOTUNE_STMT_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X

  // Buffers and variable definitions are kept by default; passes that rewrite them override these.
  virtual Buffer MutateBuffer(const Buffer& b) { return b; }

 protected:
  // Rebuilds `op` with mutated fields; returns `self` unchanged (sharing the node) when nothing changed.
  // Fields are mutated in order; the node (and a vector field) is copied only at its first change:
  // most nodes a pass visits stay as they are, and copying each one cost an allocation per vector.
  template <class N, class Ref>
  Ref MutateFields(const N* op, const Ref& self) {
    std::shared_ptr<N> copy = ChangedFields(op);
    if (!copy) return self;
    return copy;
  }
  // The same, with null for an unchanged node.
  template <class N>
  std::shared_ptr<N> ChangedFields(const N* op) {
    std::shared_ptr<N> copy;
    MutateFieldsAt(op, copy, std::make_index_sequence<std::tuple_size_v<decltype(op->Fields())>>{});
    return copy;
  }

 private:
  // Mutate without the mapping of null to the node itself.
  Expr Dispatch(const Expr& e);
  Stmt Dispatch(const Stmt& s);

  template <class N, size_t... I>
  void MutateFieldsAt([[maybe_unused]] const N* op, [[maybe_unused]] std::shared_ptr<N>& copy,
                      std::index_sequence<I...>) {  // maybe unused: a node without fields
    (MutateFieldAt<I>(op, copy), ...);
  }
  template <size_t I, class N>
  void MutateFieldAt(const N* op, std::shared_ptr<N>& copy) {
    auto mutated = Mutated(std::get<I>(op->Fields()));
    if (!mutated) return;
    if (!copy) copy = std::make_shared<N>(*op);
    std::get<I>(copy->Fields()) = std::move(*mutated);
  }

  // The mutated value of a field, or nullopt when it is unchanged (the same nodes).
  std::optional<Expr> Mutated(const Expr& e) {
    if (!e) return std::nullopt;
    Expr n = Dispatch(e);
    if (!n || n == e) return std::nullopt;
    return n;
  }
  std::optional<Stmt> Mutated(const Stmt& s) {
    if (!s) return std::nullopt;
    Stmt n = Dispatch(s);
    if (!n || n == s) return std::nullopt;
    return n;
  }
  std::optional<Buffer> Mutated(const Buffer& b) {
    if (!b) return std::nullopt;
    Buffer n = MutateBuffer(b);
    if (n == b) return std::nullopt;
    return n;
  }
  std::optional<Var> Mutated(const Var&) { return std::nullopt; }
  template <class T>
  std::optional<std::vector<T>> Mutated(const std::vector<T>& v) {
    std::optional<std::vector<T>> out;
    for (size_t i = 0; i < v.size(); ++i) {
      auto x = Mutated(v[i]);
      if (!x) continue;
      if (!out) out = v;
      (*out)[i] = std::move(*x);
    }
    return out;
  }
  template <class T>
  std::optional<T> Mutated(const T&) {
    return std::nullopt;
  }
};


}  // namespace autotune::tir
