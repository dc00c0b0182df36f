// Whether an expression can take different values in the threads of one block: the question behind
// every barrier rule (a barrier under a thread-dependent condition deadlocks or races).
#pragma once

#include <unordered_set>

#include "tir/expr.h"

namespace autotune::tir {

enum class LoadDependence {
  kLocalLoads,  // a load of a local (per-thread) buffer differs per thread; shared/global loads do not
  kAnyLoad,     // every load may differ (conservative: memory may have been written per thread)
};

bool IsThreadDependent(const Expr& e, const std::unordered_set<const VarNode*>& thread_vars,
                       LoadDependence loads = LoadDependence::kLocalLoads);

}  // namespace autotune::tir
