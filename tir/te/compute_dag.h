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
  // Computes written out besides `output` (the sum of a fused residual), in DAG order: kernel
  // arguments after the inputs and before the output.
  std::vector<Operation> side_outputs;

  // Builds the DAG of `computes` (the last one is the output); `inputs` fixes the argument order of
  // the placeholders; `side_outputs` (some of `computes`) are written out as well.
  static ComputeDAG Make(const std::vector<Operation>& inputs, const std::vector<Operation>& computes,
                         const std::vector<Operation>& side_outputs = {});
  bool IsSideOutput(const Operation& op) const;
};

}  // namespace autotune::tir::te
