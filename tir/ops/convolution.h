// What conv1d, conv2d and conv3d share: the geometry of a grouped, strided, dilated convolution over
// one to three spatial dimensions, its checks, its compute stages (the zero padding as a stage of its
// own, so schedules can inline it, then the sum over input channels and the kernel window) and its
// reference. The operators differ only in their parameter names and layouts: channels first (NCHW data,
// KCRS weights) or channels last (NHWC data, KRSC weights, NPQK out: conv2d_nhwc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "support/result.h"
#include "tir/ops/operator.h"
#include "tir/te/operation.h"

namespace autotune::tir {

struct ConvGeometry {
  int64_t N = 1, C = 1, K = 1, stride = 1, pad = 0, dilation = 1, groups = 1;
  std::vector<int64_t> in;      // spatial input extents, outermost first (D, H, W)
  std::vector<int64_t> kernel;  // spatial kernel extents, as many
  bool channels_last = false;   // channels after the spatial dimensions in data, weights and output

  int64_t Cg() const { return C / groups; }
  int64_t Kg() const { return K / groups; }
  int64_t Out(size_t d) const { return (in[d] + 2 * pad - dilation * (kernel[d] - 1) - 1) / stride + 1; }
  std::vector<int64_t> DataShape() const;    // N, C, in... (channels last: N, in..., C)
  std::vector<int64_t> WeightShape() const;  // K, C/groups, kernel... (K, kernel..., C/groups)
  std::vector<int64_t> OutShape() const;     // N, K, out... (N, out..., K)
  // The dimension of the channels in data and output (1, or after the spatial ones).
  int ChannelDim() const { return channels_last ? static_cast<int>(in.size()) + 1 : 1; }
  double Outputs() const;
};

// The names a rank's stages use: axes of the padded input and of the output, and the reduce axes
// (input channel first).
struct ConvAxisNames {
  std::vector<std::string> padded, out, reduce;
};

// Every parameter positive (pad non-negative), channels divisible by the groups, the dilated kernel
// inside the padded input, and every tensor addressable with int32 indices.
Result<void> ValidateConv(const ShapeParams& params, const ConvGeometry& g);

// The padded input (or `data` itself without padding) and the convolution stage "conv" in float32,
// its products at `precision`, appended to `computes`.
te::Operation ConvCompute(const ConvGeometry& g, const ConvAxisNames& names, const te::Operation& data,
                          const te::Operation& weight, Precision precision, std::vector<te::Operation>& computes);

// What names a convolution operator of one rank: its parameters, stages and layout.
struct ConvRank {
  std::string name, summary, layout;
  std::vector<ParamSpec> spatial, kernel;  // input extents (L; H, W; D, H, W) and kernel extents
  std::string dimensions;                  // stride, pad and dilation apply to "both" / "all" (or "")
  ConvAxisNames axes;                      // in the layout's order
  bool channels_last = false;
};

// The operator of that rank: parameters N, C, spatial..., K, kernel..., stride, pad, dilation, groups.
std::unique_ptr<OperatorDef> MakeConvOperator(ConvRank rank);

// The convolution of `data` and `weight` (layouts as DataShape and WeightShape, either order of
// channels) into `out`, in double and rounded once to float.
void ConvReference(const ConvGeometry& g, const float* data, const float* weight, float* out);

}  // namespace autotune::tir
