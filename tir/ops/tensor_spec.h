// Shape and dtype of one kernel argument, as the measurement side sees it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tir/dtype.h"

namespace autotune::tir {

struct TensorSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;

  int64_t NumElements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

}  // namespace autotune::tir
