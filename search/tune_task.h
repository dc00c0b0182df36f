// A tuning task: one workload of a job and how much it counts. A network's layers become tasks whose
// weight is how often the layer occurs, so the job minimizes the weighted total latency.
#pragma once

#include <string>

#include "tir/ops/operator.h"

namespace autotune::search {

struct TuneTaskSpec {
  std::string op;        // "conv2d"
  std::string shape;     // "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1"
  std::string epilogue;  // "", "bias", "relu", "bias,relu"
  double weight = 1;     // occurrences in the network (> 0)
  std::string name;      // optional label, e.g. "layer2.0.conv1"
  std::string dtype = "float32";  // element type: float32, float16 or bfloat16
};

// The workload a task tunes.
inline Result<tir::Workload> WorkloadOf(const TuneTaskSpec& t) {
  return tir::MakeWorkload(t.op, t.shape, t.epilogue, t.dtype);
}

}  // namespace autotune::search
