// Factories of the built-in operators (one file each), registered by RegisterBuiltinOperators.
#pragma once

#include <memory>

#include "tir/ops/operator.h"

namespace autotune::tir {

std::unique_ptr<OperatorDef> MakeGemmOperator();
std::unique_ptr<OperatorDef> MakeBatchMatmulOperator();
std::unique_ptr<OperatorDef> MakeConv1dOperator();
std::unique_ptr<OperatorDef> MakeConv2dOperator();
std::unique_ptr<OperatorDef> MakeConv2dNhwcOperator();
std::unique_ptr<OperatorDef> MakeConv3dOperator();
std::unique_ptr<OperatorDef> MakeConv2dTransposeOperator();
std::unique_ptr<OperatorDef> MakeCapsuleConv2dOperator();
std::unique_ptr<OperatorDef> MakeNormOperator();
std::unique_ptr<OperatorDef> MakeSoftmaxOperator();
std::unique_ptr<OperatorDef> MakeLayerNormOperator();
std::unique_ptr<OperatorDef> MakeRmsNormOperator();
std::unique_ptr<OperatorDef> MakeAddLayerNormOperator();
std::unique_ptr<OperatorDef> MakeAddRmsNormOperator();

}  // namespace autotune::tir
