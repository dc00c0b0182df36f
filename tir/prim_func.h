// A lowered kernel: its parameters (global buffers: every input in order, then the output) and the
// lowered body. This is what codegen, feature extraction and the GPU validity check consume.
#pragma once

#include <string>
#include <vector>

#include "tir/buffer.h"
#include "tir/packed_layout.h"
#include "tir/stmt.h"

namespace autotune::tir {

struct PrimFunc {
  std::string name;            // entry symbol in the generated source
  std::vector<Buffer> params;  // global buffers, inputs first, output last
  Stmt body;
  // Inputs the kernel takes packed (tir/packed_layout.h): each made by its pack function, once,
  // from the workload's tensor, before the kernel is called.
  std::vector<PackedParam> packs = {};
  // cpu: float32 lanes of the target's vector registers (tir::CpuVectors), the widest chunk the C
  // backend prints vector code in: a wider GCC vector is kept on the stack (c_vectors.h).
  int vector_lanes = 16;
};

}  // namespace autotune::tir
