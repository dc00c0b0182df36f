// The one lowering pipeline: schedule state -> lowered TIR. Codegen, feature extraction and the GPU
// validity check all call it, so what the cost model sees is what runs (less one step, below). A
// straight list of passes, with an optional dump of the IR after each step (--dump-ir).
#pragma once

#include <functional>
#include <string>

#include "tir/prim_func.h"
#include "support/result.h"
#include "tir/schedule/state.h"

namespace autotune::tir {

struct LowerOptions {
  std::string name = "kernel";
  // Called after every step with the step's name and the function as it stands.
  std::function<void(const std::string& step, const PrimFunc& f)> dump;
  // Tensor-core main loops load each mma step's fragments during the previous step
  // (tir/lower/pipeline_fragments.h). The cost model's features leave it out: they describe the
  // programs its stored models were trained on (kFeatureVersion).
  bool pipeline_fragments = true;
};

Result<PrimFunc> Lower(const ScheduleState& state, const LowerOptions& options = {});

}  // namespace autotune::tir
