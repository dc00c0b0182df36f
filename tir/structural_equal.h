// Structural equality and hashing of IR trees, modulo renaming.
//
// Variables and buffers are matched by a bijection built on first encounter: the first Var met in
// one tree pairs with the Var at the same place in the other, and every later occurrence must agree
// (both ways). Var names are ignored; a buffer's name, dtype, scope, shape and strides must match on
// its first encounter. Node kinds, dtypes and every reflected field must match; doubles compare
// bitwise. The hash is consistent with this equality: it hashes variables and buffers by their order
// of first appearance, never by identity. It is an in-memory hash, not a persistent key.
#pragma once

#include <cstddef>

#include "tir/buffer.h"
#include "tir/expr.h"
#include "tir/stmt.h"

namespace autotune::tir {

bool StructuralEqual(const Expr& a, const Expr& b);
bool StructuralEqual(const Stmt& a, const Stmt& b);
bool StructuralEqual(const Buffer& a, const Buffer& b);

size_t StructuralHash(const Expr& e);
size_t StructuralHash(const Stmt& s);
size_t StructuralHash(const Buffer& b);

// Equality without renaming: like StructuralEqual, but variables and buffers must be the very same
// nodes. This is "the same value" for expressions over one scope (used to merge like terms).
bool ExprDeepEqual(const Expr& a, const Expr& b);

}  // namespace autotune::tir
