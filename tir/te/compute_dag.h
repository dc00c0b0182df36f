// The compute DAG of a workload: all operations in topological order (producers before consumers).
#pragma once

#include <string>
#include <vector>

#include "tir/te/operation.h"

namespace autotune::tir::te {

struct ComputeDAG {
  std::vector<Operation> ops;     // topological order
  std::vector<Operation> inputs;  // placeholders, in kernel argument order
  Operation output;

  // Builds the DAG of `computes` (the last one is the output); `inputs` fixes the argument order of
  // the placeholders.
  static ComputeDAG Make(const std::vector<Operation>& inputs, const std::vector<Operation>& computes);
};

}  // namespace autotune::tir::te
