// softmax: Y[M, N] = exp(X - max of the row) / sum of the row's exp, over the last axis (the
// numerically stable form: no exp overflows).
#include <algorithm>
#include <cmath>

#include "tir/ops/builtin_operators.h"
#include "tir/ops/row_operator.h"

namespace autotune::tir {

std::unique_ptr<OperatorDef> MakeSoftmaxOperator() {
  RowOperatorSpec s;
  s.name = "softmax";
  s.summary = "softmax over the last axis, Y[M,N] = exp(X - rowmax) / rowsum(exp(X - rowmax))";
  s.layout = "X[M,N] -> Y[M,N]";
  s.params = {{"M", std::nullopt, "rows"}, {"N", std::nullopt, "row length (the softmax axis)"}};
  s.flops_per_element = 5;  // compare, subtract, exp, add, divide
  s.build = [](const RowShape& shape, const te::Operation& x, const std::vector<te::Operation>&, DType dtype) {
    auto max = ReduceRows("row_max", ReduceOp::kMax, shape, [&](auto& row, auto& col) { return ReadRow(x, row, col); });
    auto shifted_exp = [&](const std::vector<Var>& row, const std::vector<Var>& col) {
      std::vector<Expr> r(row.begin(), row.end());
      return Call(DType::kFloat32, "exp", {Sub(ReadRow(x, row, col), te::Read(max, r))});
    };
    auto e = MapRows("exp", shape, shifted_exp);
    auto read_e = [&](const std::vector<Var>& row, const std::vector<Var>& col) {
      std::vector<Expr> idx(row.begin(), row.end());
      idx.insert(idx.end(), col.begin(), col.end());
      return te::Read(e, idx);
    };
    auto sum = ReduceRows("row_sum", ReduceOp::kSum, shape, read_e);
    auto y = MapRows("Y", shape, [&](auto& row, auto& col) {
      return RoundTo(dtype, Div(read_e(row, col), te::Read(sum, std::vector<Expr>(row.begin(), row.end()))));
    });
    return std::vector<te::Operation>{max, e, sum, y};
  };
  s.reference = [](int64_t n, const float* x, const std::vector<const float*>&, float* out) {
    const double max = *std::max_element(x, x + n);
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += std::exp(x[j] - max);
    for (int64_t j = 0; j < n; ++j) out[j] = static_cast<float>(std::exp(x[j] - max) / sum);
  };
  return MakeRowOperator(std::move(s));
}

}  // namespace autotune::tir
