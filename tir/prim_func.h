// A lowered kernel: its parameters (global buffers: every input in order, then the output) and the
// lowered body. This is what codegen, feature extraction and the GPU validity check consume.
#pragma once

#include <string>
#include <vector>

#include "tir/buffer.h"
#include "tir/stmt.h"

namespace autotune::tir {

struct PrimFunc {
  std::string name;            // entry symbol in the generated source
  std::vector<Buffer> params;  // global buffers, inputs first, output last
  Stmt body;
};

}  // namespace autotune::tir
