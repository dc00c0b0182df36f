// layer_norm: Y[M, N] = (X - mean) / sqrt(var + eps) * gamma + beta over the last axis, with the
// variance of the row computed from its deviations from the mean (two passes over a row: no
// cancellation when the mean is large against the spread); add_layer_norm first adds a residual R
// and writes the sum out too.
#include <cmath>

#include "tir/ops/builtin_operators.h"
#include "tir/ops/row_operator.h"

namespace autotune::tir {

namespace {

RowOperatorSpec LayerNormSpec() {
  RowOperatorSpec s;
  s.name = "layer_norm";
  s.summary = "layer normalization over the last axis: (X - mean) / sqrt(var + 1e-5) * gamma + beta";
  s.layout = "X[M,N] gamma[N] beta[N] -> Y[M,N]";
  s.params = {{"M", std::nullopt, "rows"}, {"N", std::nullopt, "row length (the normalized axis)"}};
  s.weights = {"gamma", "beta"};
  s.flops_per_element = 8;  // sum; subtract, square, add; subtract, scale, multiply, add
  s.build = [](const RowShape& shape, const te::Operation& x, const std::vector<te::Operation>& w, DType dtype) {
    const Expr inv_n = FloatImm(1.0 / static_cast<double>(shape.Cols()));
    auto sum = ReduceRows("row_sum", ReduceOp::kSum, shape, [&](auto& row, auto& col) { return ReadRow(x, row, col); });
    auto centered = [&](const std::vector<Var>& row, const std::vector<Var>& col) {
      return Sub(ReadRow(x, row, col), Mul(te::Read(sum, std::vector<Expr>(row.begin(), row.end())), inv_n));
    };
    auto sq = ReduceRows("row_sqdev", ReduceOp::kSum, shape, [&](auto& row, auto& col) {
      const Expr d = centered(row, col);
      return Mul(d, d);
    });
    auto y = MapRows("Y", shape, [&](auto& row, auto& col) {
      const Expr var = Mul(te::Read(sq, std::vector<Expr>(row.begin(), row.end())), inv_n);
      const Expr inv_std = Call(DType::kFloat32, "rsqrt", {Add(var, FloatImm(kNormEpsilon))});
      return RoundTo(dtype, Add(Mul(Mul(centered(row, col), inv_std), ReadCols(w[0], col)), ReadCols(w[1], col)));
    });
    return std::vector<te::Operation>{sum, sq, y};
  };
  s.reference = [](int64_t n, const float* x, const std::vector<const float*>& w, float* out) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mean += x[j];
    mean /= static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j) var += (x[j] - mean) * (x[j] - mean);
    const double inv_std = 1.0 / std::sqrt(var / static_cast<double>(n) + kNormEpsilon);
    for (int64_t j = 0; j < n; ++j) out[j] = static_cast<float>((x[j] - mean) * inv_std * w[0][j] + w[1][j]);
  };
  return s;
}

}  // namespace

std::unique_ptr<OperatorDef> MakeLayerNormOperator() { return MakeRowOperator(LayerNormSpec()); }

std::unique_ptr<OperatorDef> MakeAddLayerNormOperator() { return MakeRowOperator(WithResidual(LayerNormSpec())); }

}  // namespace autotune::tir
