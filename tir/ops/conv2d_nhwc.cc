// conv2d_nhwc: conv2d with the channels last, the layout of PyTorch's channels_last tensors and of
// cuDNN's fastest half-precision convolutions: NHWC activations, KRSC weights, NPQK output. A layout
// changes the tensors a kernel takes, so it is an operator of its own (its own workloads and records).
#include "tir/ops/builtin_operators.h"
#include "tir/ops/convolution.h"

namespace autotune::tir {

std::unique_ptr<OperatorDef> MakeConv2dNhwcOperator() {
  return MakeConvOperator({"conv2d_nhwc",
                           "2-D convolution with the channels last, NHWC data x KRSC weights -> NPQK (groups too)",
                           "data NHWC, weight KRSC -> out NPQK",
                           {{"H", std::nullopt, "input height"}, {"W", std::nullopt, "input width"}},
                           {{"R", std::nullopt, "kernel height"}, {"S", std::nullopt, "kernel width"}},
                           "both",
                           {{"n", "y", "x", "c"}, {"n", "p", "q", "k"}, {"rc", "ry", "rx"}},
                           /*channels_last=*/true});
}

}  // namespace autotune::tir
