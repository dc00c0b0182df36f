// conv3d: NCDHW activations, KCQRS weights (PyTorch's F.conv3d, a QxRxS kernel); stride, padding,
// dilation and groups, the same in every dimension (tir/ops/convolution.h).
#include "tir/ops/builtin_operators.h"
#include "tir/ops/convolution.h"

namespace autotune::tir {

std::unique_ptr<OperatorDef> MakeConv3dOperator() {
  return MakeConvOperator({"conv3d",
                           "3-D convolution, NCDHW data x KCQRS weights -> NKOPQ (grouped and depthwise via groups)",
                           "data NCDHW, weight KCQRS -> out NKOPQ",
                           {{"D", std::nullopt, "input depth"},
                            {"H", std::nullopt, "input height"},
                            {"W", std::nullopt, "input width"}},
                           {{"Q", std::nullopt, "kernel depth"},
                            {"R", std::nullopt, "kernel height"},
                            {"S", std::nullopt, "kernel width"}},
                           "all",
                           {{"n", "c", "z", "y", "x"}, {"n", "k", "o", "p", "q"}, {"rc", "rz", "ry", "rx"}}});
}

}  // namespace autotune::tir
