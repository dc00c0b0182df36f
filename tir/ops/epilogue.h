// The fused elementwise tail shared by all contraction operators: out = parts(main), each part
// applied in order (tir/ops/operator.h: bias, scale, shift, residual and activations).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tir/ops/operator.h"
#include "tir/te/operation.h"

namespace autotune::tir {

inline constexpr double kInvSqrt2 = 0.70710678118654752440;
inline constexpr double kSqrt2OverPi = 0.79788456080286535588;
inline constexpr double kGeluTanhCubic = 0.044715;

// Whether the part reads an input (bias, scale, shift: per channel; residual: of the output's shape).
bool TakesInput(EpiloguePart p);

// An activation part applied to x in T (the reference's double, a peer's float); x for other parts.
template <class T>
T ApplyActivation(EpiloguePart p, T x) {
  const T zero = 0, one = 1, half = 0.5;
  switch (p) {
    case EpiloguePart::kRelu: return std::max(x, zero);
    case EpiloguePart::kRelu6: return std::min(std::max(x, zero), T(6));
    case EpiloguePart::kGelu: return half * x * (one + std::erf(x * T(kInvSqrt2)));
    case EpiloguePart::kGeluTanh:
      return half * x * (one + std::tanh(T(kSqrt2OverPi) * (x + T(kGeluTanhCubic) * x * x * x)));
    case EpiloguePart::kSilu: return x / (one + std::exp(-x));
    default: return x;
  }
}

// Adds the epilogue stage after `main` (a float32 stage) if the epilogue has any part or the output
// type is not float32: it applies the parts in float32 and rounds once to `dtype`. `channel_dim` is
// the output dimension that indexes the per-channel inputs (bias, scale, shift). The inputs the parts
// take (of `dtype`) are appended to `inputs` in the order of the parts.
te::Operation AddEpilogue(const te::Operation& main, int channel_dim, const Epilogue& epilogue, DType dtype,
                          std::vector<te::Operation>& inputs, std::vector<te::Operation>& computes);

// A workload's identity and tensors: operator, shape, epilogue and layout, the specs of `inputs`, of
// the output (the last of `computes`) and of `side_outputs` (computes written out as well), and the
// compute DAG. Figures and the reference are the caller's to fill in.
Workload StagedWorkload(const std::string& op, const ShapeParams& shape, const Epilogue& epilogue, std::string layout,
                        const std::vector<te::Operation>& inputs, const std::vector<te::Operation>& computes,
                        const std::vector<te::Operation>& side_outputs = {});

// t[indices] as float32: 16-bit tensors are converted where they are read, so arithmetic is float32.
Expr ReadFloat32(const te::Operation& t, const std::vector<Expr>& indices);

// Bytes of the given tensors' elements, each of `dtype` (the minimum traffic of a workload).
double TensorBytes(DType dtype, std::initializer_list<double> element_counts);

// What the epilogue adds to a workload with `outputs` output elements and `channels` channels: its
// floating-point operations (one per add or multiply of an input; activations count none, as relu
// always did) and the bytes of the inputs it reads.
double EpilogueFlops(const Epilogue& epilogue, double outputs);
double EpilogueInputBytes(const Epilogue& epilogue, DType dtype, double channels, double outputs);

// Applies the epilogue to a reference output in place (in double). `inputs` are the epilogue's
// inputs in the order of its parts (the operator's inputs after its own).
void ApplyEpilogueReference(const Epilogue& epilogue, const std::vector<int64_t>& out_shape, int channel_dim,
                            const float* const* inputs, float* out);

// Fails when a tensor of these dimensions would not be addressable with int32 indices.
Result<void> CheckTensorSize(const std::string& name, const std::vector<int64_t>& shape);

}  // namespace autotune::tir
