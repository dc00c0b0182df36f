// Linear forms of integer index expressions: sum(coefficient * term) + constant, where a term is
// anything but an integer constant, +, - or a product with a constant. The simplifier builds its
// canonical sums from them; region analysis bounds an index term by term.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tir/expr.h"

namespace autotune::tir {

// A hash consistent with ExprDeepEqual (variables and buffers by identity), so that finding a like
// term is mostly an integer comparison. Collisions are fine: ExprDeepEqual decides.
size_t TermHash(const Expr& e);

// Terms keep their order of first appearance; like terms (ExprDeepEqual) are merged, and a term whose
// coefficient cancels to 0 is dropped. Arithmetic is checked in `dtype`.
struct LinearSum {
  struct Term {
    Expr expr;
    int64_t coeff;
    size_t hash;  // TermHash(expr)
  };

  explicit LinearSum(DType t) : dtype(t) {}
  DType dtype;
  std::vector<Term> terms;
  int64_t constant = 0;
  bool ok = true;  // false once a coefficient or the constant overflowed: the form is then unusable

  void AddConst(int64_t c);
  void AddTerm(const Expr& t, int64_t c) { AddTerm(t, c, TermHash(t)); }
  void AddTerm(const Expr& t, int64_t c, size_t hash);
  // Adds `scale` times the expression `e`, decomposing its linear structure.
  void Add(const Expr& e, int64_t scale);
  void AddScaled(const LinearSum& o, int64_t scale);
};

// `scale` times e as a linear form (check `ok` before using it).
LinearSum ToLinear(const Expr& e, int64_t scale = 1);

}  // namespace autotune::tir
