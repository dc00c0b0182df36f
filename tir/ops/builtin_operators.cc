#include "tir/ops/builtin_operators.h"

namespace autotune::tir {

// Registration is explicit (no static initializers, which vanish from static libraries).
void RegisterBuiltinOperators(OperatorRegistry& registry) {
  registry.Register(MakeGemmOperator());
  registry.Register(MakeBatchMatmulOperator());
  registry.Register(MakeConv2dOperator());
  registry.Register(MakeConv2dNhwcOperator());
  registry.Register(MakeConv1dOperator());
  registry.Register(MakeConv3dOperator());
  registry.Register(MakeConv2dTransposeOperator());
  registry.Register(MakeCapsuleConv2dOperator());
  registry.Register(MakeNormOperator());
  registry.Register(MakeSoftmaxOperator());
  registry.Register(MakeLayerNormOperator());
  registry.Register(MakeRmsNormOperator());
  registry.Register(MakeAddLayerNormOperator());
  registry.Register(MakeAddRmsNormOperator());
}

}  // namespace autotune::tir
