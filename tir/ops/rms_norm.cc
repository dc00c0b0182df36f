// rms_norm: Y[M, N] = X / sqrt(mean of the row's squares + eps) * W over the last axis (the
// normalization of LLaMA-style decoders); add_rms_norm first adds a residual R and writes the sum
// out too (a decoder's `h = x + r; y = rms_norm(h)` in one kernel).
#include <cmath>

#include "tir/ops/builtin_operators.h"
#include "tir/ops/row_operator.h"

namespace autotune::tir {

namespace {

RowOperatorSpec RmsNormSpec() {
  RowOperatorSpec s;
  s.name = "rms_norm";
  s.summary = "RMS normalization over the last axis: X / sqrt(mean(X^2) + 1e-5) * W";
  s.layout = "X[M,N] W[N] -> Y[M,N]";
  s.params = {{"M", std::nullopt, "rows"}, {"N", std::nullopt, "row length (the normalized axis)"}};
  s.weights = {"W"};
  s.flops_per_element = 4;  // square, add; scale, multiply
  s.build = [](const RowShape& shape, const te::Operation& x, const std::vector<te::Operation>& w, DType dtype) {
    auto sq = ReduceRows("row_sumsq", ReduceOp::kSum, shape, [&](auto& row, auto& col) {
      const Expr v = ReadRow(x, row, col);
      return Mul(v, v);
    });
    auto y = MapRows("Y", shape, [&](auto& row, auto& col) {
      const Expr mean_sq = Mul(te::Read(sq, std::vector<Expr>(row.begin(), row.end())),
                               FloatImm(1.0 / static_cast<double>(shape.Cols())));
      const Expr inv_rms = Call(DType::kFloat32, "rsqrt", {Add(mean_sq, FloatImm(kNormEpsilon))});
      return RoundTo(dtype, Mul(Mul(ReadRow(x, row, col), inv_rms), ReadCols(w[0], col)));
    });
    return std::vector<te::Operation>{sq, y};
  };
  s.reference = [](int64_t n, const float* x, const std::vector<const float*>& w, float* out) {
    double sum_sq = 0;
    for (int64_t j = 0; j < n; ++j) sum_sq += static_cast<double>(x[j]) * x[j];
    const double inv_rms = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + kNormEpsilon);
    for (int64_t j = 0; j < n; ++j) out[j] = static_cast<float>(x[j] * inv_rms * w[0][j]);
  };
  return s;
}

}  // namespace

std::unique_ptr<OperatorDef> MakeRmsNormOperator() { return MakeRowOperator(RmsNormSpec()); }

std::unique_ptr<OperatorDef> MakeAddRmsNormOperator() { return MakeRowOperator(WithResidual(RmsNormSpec())); }

}  // namespace autotune::tir
