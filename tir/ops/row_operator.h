// Row operators: softmax, layer_norm, rms_norm and norm reduce or normalize every row of an input
// X[rows..., cols...] (the rows are the leading dimensions, a row the trailing ones). Their compute
// definitions are reductions over a row (ReduceRows) and elementwise stages (MapRows); the schedule
// rules for rows (search/rules/row_reduction_*.cc) keep each row's work in one block or thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tir/ops/operator.h"
#include "tir/te/operation.h"

namespace autotune::tir {

struct RowShape {
  std::vector<int64_t> rows, cols;
  int64_t Rows() const;
  int64_t Cols() const;
};

using RowBody = std::function<Expr(const std::vector<Var>& row, const std::vector<Var>& col)>;

// out[row...] = the reduction `op` over the row of value(row, col).
te::Operation ReduceRows(const std::string& name, ReduceOp op, const RowShape& shape, const RowBody& value);
// out[row..., col...] = value(row, col).
te::Operation MapRows(const std::string& name, const RowShape& shape, const RowBody& value);
// X[row..., col...] and W[col...] as float32 values.
Expr ReadRow(const te::Operation& x, const std::vector<Var>& row, const std::vector<Var>& col);
Expr ReadCols(const te::Operation& w, const std::vector<Var>& col);
// x rounded to the output type (nothing to do for float32).
Expr RoundTo(DType dtype, const Expr& x);

struct RowOperatorSpec {
  std::string name, summary, layout;
  std::vector<ParamSpec> params;  // the row dimensions first, then the column dimensions
  size_t row_params = 1;
  std::vector<std::string> weights;  // inputs of one value per column, after X (e.g. W)
  bool output_per_row = false;       // the output is [rows] (norm), not X's shape
  // A residual input R of X's shape, after X: the stages normalize sum = X + R (rounded to the type),
  // which is written out too, as inference engines fuse a decoder's residual add into its norm.
  bool residual = false;
  double flops_per_element = 1;
  // The stages after X (the sum with `residual`), the output last (of `dtype`).
  std::function<std::vector<te::Operation>(const RowShape&, const te::Operation& x,
                                           const std::vector<te::Operation>& weights, DType dtype)>
      build;
  // One row of the reference in double: x (the sum with `residual`) and each weight hold `cols`
  // values; out gets `cols` (or 1).
  std::function<void(int64_t cols, const float* x, const std::vector<const float*>& weights, float* out)> reference;
};

std::unique_ptr<OperatorDef> MakeRowOperator(RowOperatorSpec spec);
// The operator with a residual: named add_<name>, R after X in its layout, the sum written out first.
RowOperatorSpec WithResidual(RowOperatorSpec spec);

// The epsilon layer_norm and rms_norm add to the variance (PyTorch's default for layer_norm).
inline constexpr double kNormEpsilon = 1e-5;

}  // namespace autotune::tir
