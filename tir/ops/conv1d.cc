// conv1d: NCL activations, KCR weights (PyTorch's F.conv1d); stride, padding, dilation and groups
// (tir/ops/convolution.h).
#include "tir/ops/builtin_operators.h"
#include "tir/ops/convolution.h"

namespace autotune::tir {

std::unique_ptr<OperatorDef> MakeConv1dOperator() {
  return MakeConvOperator({"conv1d",
                           "1-D convolution, NCL data x KCR weights -> NKL (grouped and depthwise via groups)",
                           "data NCL, weight KCR -> out NKL",
                           {{"L", std::nullopt, "input length"}},
                           {{"R", std::nullopt, "kernel width"}},
                           "",
                           {{"n", "c", "x"}, {"n", "k", "q"}, {"rc", "rx"}}});
}

}  // namespace autotune::tir
