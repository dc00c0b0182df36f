// conv2d: NCHW activations, KCRS weights; stride, padding, dilation and groups (depthwise is
// groups = C = K). Padding is its own stage so schedules can inline it (tir/ops/convolution.h).
#include "tir/ops/builtin_operators.h"
#include "tir/ops/convolution.h"

namespace autotune::tir {

std::unique_ptr<OperatorDef> MakeConv2dOperator() {
  return MakeConvOperator({"conv2d",
                           "2-D convolution, NCHW data x KCRS weights -> NKPQ (grouped and depthwise via groups)",
                           "data NCHW, weight KCRS -> out NKPQ",
                           {{"H", std::nullopt, "input height"}, {"W", std::nullopt, "input width"}},
                           {{"R", std::nullopt, "kernel height"}, {"S", std::nullopt, "kernel width"}},
                           "both",
                           {{"n", "c", "y", "x"}, {"n", "k", "p", "q"}, {"rc", "ry", "rx"}}});
}

}  // namespace autotune::tir
