// norm: Y[B] = the square root of the sum of squares of X[B, M, N] over M and N (the Frobenius norm
// of each matrix: Ansor's NRM).
#include <cmath>

#include "tir/ops/builtin_operators.h"
#include "tir/ops/row_operator.h"

namespace autotune::tir {

std::unique_ptr<OperatorDef> MakeNormOperator() {
  RowOperatorSpec s;
  s.name = "norm";
  s.summary = "Frobenius norm of each matrix, Y[B] = sqrt(sum over M,N of X[B,M,N]^2)";
  s.layout = "X[B,M,N] -> Y[B]";
  s.params = {{"B", 1, "batch (matrices)"}, {"M", std::nullopt, "rows of each matrix"},
              {"N", std::nullopt, "columns of each matrix"}};
  s.output_per_row = true;
  s.flops_per_element = 2;  // square, add
  s.build = [](const RowShape& shape, const te::Operation& x, const std::vector<te::Operation>&, DType dtype) {
    auto sq = ReduceRows("sumsq", ReduceOp::kSum, shape, [&](auto& row, auto& col) {
      const Expr v = ReadRow(x, row, col);
      return Mul(v, v);
    });
    RowShape out_shape{shape.rows, {}};
    auto y = MapRows("Y", out_shape, [&](auto& row, auto&) {
      return RoundTo(dtype, Call(DType::kFloat32, "sqrt", {te::Read(sq, std::vector<Expr>(row.begin(), row.end()))}));
    });
    return std::vector<te::Operation>{sq, y};
  };
  s.reference = [](int64_t n, const float* x, const std::vector<const float*>&, float* out) {
    double sum_sq = 0;
    for (int64_t j = 0; j < n; ++j) sum_sq += static_cast<double>(x[j]) * x[j];
    out[0] = static_cast<float>(std::sqrt(sum_sq));
  };
  return MakeRowOperator(std::move(s));
}

}  // namespace autotune::tir
