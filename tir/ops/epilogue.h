// The fused elementwise tail shared by all operators: out = relu(main + bias[channel]).
#pragma once

#include <string>
#include <vector>

#include "tir/ops/operator.h"
#include "tir/te/operation.h"

namespace autotune::tir {

// Adds the epilogue stage after `main` (if the epilogue has any part). `channel_dim` is the output
// dimension that indexes the bias; the bias placeholder (if any) is appended to `inputs`.
te::Operation AddEpilogue(const te::Operation& main, int channel_dim, const Epilogue& epilogue,
                          std::vector<te::Operation>& inputs, std::vector<te::Operation>& computes);

// Applies the epilogue to a reference output in place; `bias` is the last input when present.
void ApplyEpilogueReference(const Epilogue& epilogue, const std::vector<int64_t>& out_shape, int channel_dim,
                            const float* bias, float* out);

// Fails when a tensor of these dimensions would not be addressable with int32 indices.
Result<void> CheckTensorSize(const std::string& name, const std::vector<int64_t>& shape);

}  // namespace autotune::tir
