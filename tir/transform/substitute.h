// Replaces variables by expressions. Binding occurrences (a loop's variable, a reduction's axis) are
// left as they are; only uses are replaced. Buffer shapes are not rewritten.
#pragma once

#include <functional>
#include <unordered_map>

#include "tir/expr.h"
#include "tir/stmt.h"

namespace autotune::tir {

// `fn` returns the replacement of a variable, or nullptr to keep it. A replacement must have the
// variable's dtype. Unchanged subtrees are shared with the input.
Expr Substitute(const Expr& e, const std::function<Expr(const VarNode*)>& fn);
Expr Substitute(const Expr& e, const std::unordered_map<const VarNode*, Expr>& map);
Stmt Substitute(const Stmt& s, const std::function<Expr(const VarNode*)>& fn);
Stmt Substitute(const Stmt& s, const std::unordered_map<const VarNode*, Expr>& map);

}  // namespace autotune::tir
