// What an expression uses: its variables and its loads, each node once, in order of first appearance.
#pragma once

#include <vector>

#include "tir/expr.h"

namespace autotune::tir {

std::vector<const VarNode*> VarsIn(const Expr& e);
std::vector<const BufferLoadNode*> LoadsIn(const Expr& e);

}  // namespace autotune::tir
