// What an expression uses: its variables and its loads, each node once, in order of first appearance;
// whether an expression or a statement uses a variable.
#pragma once

#include <vector>

#include "tir/expr.h"
#include "tir/stmt.h"

namespace autotune::tir {

std::vector<const VarNode*> VarsIn(const Expr& e);
std::vector<const BufferLoadNode*> LoadsIn(const Expr& e);

// Whether `v` appears in `e` (in `s`).
bool UsesVar(const Expr& e, const VarNode* v);
bool UsesVar(const Stmt& s, const VarNode* v);

}  // namespace autotune::tir
