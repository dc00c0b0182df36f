// The fused elementwise tail shared by all operators: out = relu(main + bias[channel]).
#pragma once

#include <string>
#include <vector>

#include "tir/ops/operator.h"
#include "tir/te/operation.h"

namespace autotune::tir {

// Adds the epilogue stage after `main` (a float32 stage) if the epilogue has any part or the output
// type is not float32: it adds the bias, applies relu and rounds once to `dtype`. `channel_dim` is the
// output dimension that indexes the bias; the bias placeholder (if any, of `dtype`) is appended to
// `inputs`.
te::Operation AddEpilogue(const te::Operation& main, int channel_dim, const Epilogue& epilogue, DType dtype,
                          std::vector<te::Operation>& inputs, std::vector<te::Operation>& computes);

// t[indices] as float32: 16-bit tensors are converted where they are read, so arithmetic is float32.
Expr ReadFloat32(const te::Operation& t, const std::vector<Expr>& indices);

// Bytes of the given tensors' elements, each of `dtype` (the minimum traffic of a workload).
double TensorBytes(DType dtype, std::initializer_list<double> element_counts);

// Applies the epilogue to a reference output in place; `bias` is the last input when present.
void ApplyEpilogueReference(const Epilogue& epilogue, const std::vector<int64_t>& out_shape, int channel_dim,
                            const float* bias, float* out);

// Fails when a tensor of these dimensions would not be addressable with int32 indices.
Result<void> CheckTensorSize(const std::string& name, const std::vector<int64_t>& shape);

}  // namespace autotune::tir
