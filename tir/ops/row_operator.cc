#include "tir/ops/row_operator.h"

#include <fmt/format.h>

#include "support/half.h"
#include "tir/ops/epilogue.h"

namespace autotune::tir {
namespace {

// x as a kernel stores it in `dtype` (round to nearest even, as support/half.h converts).
float RoundedTo(DType dtype, float x) {
  if (dtype == DType::kFloat16) return HalfBitsToFloat(FloatToHalfBits(x));
  if (dtype == DType::kBFloat16) return BFloat16BitsToFloat(FloatToBFloat16Bits(x));
  return x;
}

std::vector<std::string> AxisNames(const std::string& prefix, size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(n == 1 ? prefix : fmt::format("{}{}", prefix, i));
  return names;
}

class RowOperator : public OperatorDef {
 public:
  explicit RowOperator(RowOperatorSpec spec) : spec_(std::move(spec)) {}
  std::string Name() const override { return spec_.name; }
  std::string Summary() const override { return spec_.summary; }
  std::vector<ParamSpec> Params() const override { return spec_.params; }
  bool TakesEpilogue() const override { return false; }

  Result<void> Validate(const ShapeParams& p) const override {
    for (const auto& [k, v] : p) {
      if (v < 1) return MakeError(fmt::format("{}={} must be at least 1", k, v));
    }
    const RowShape s = ShapeOf(p);
    std::vector<int64_t> all = s.rows;
    all.insert(all.end(), s.cols.begin(), s.cols.end());
    return CheckTensorSize("X", all);
  }

  Workload Build(const ShapeParams& p, const Epilogue& epilogue, DType dtype, Precision) const override {
    const RowShape s = ShapeOf(p);
    std::vector<int64_t> x_shape = s.rows;
    x_shape.insert(x_shape.end(), s.cols.begin(), s.cols.end());
    std::vector<te::Operation> inputs = {te::Placeholder("X", x_shape, dtype)};
    if (spec_.residual) inputs.push_back(te::Placeholder("R", x_shape, dtype));
    const size_t first_weight = inputs.size();
    for (const auto& w : spec_.weights) inputs.push_back(te::Placeholder(w, s.cols, dtype));
    const std::vector<te::Operation> weights(inputs.begin() + static_cast<std::ptrdiff_t>(first_weight), inputs.end());
    std::vector<te::Operation> side_outputs;
    if (spec_.residual) {
      side_outputs.push_back(MapRows("sum", s, [&](auto& row, auto& col) {
        return RoundTo(dtype, Add(ReadRow(inputs[0], row, col), ReadRow(inputs[1], row, col)));
      }));
    }
    std::vector<te::Operation> computes = side_outputs;
    for (auto& c : spec_.build(s, spec_.residual ? side_outputs[0] : inputs[0], weights, dtype)) computes.push_back(c);

    Workload w = StagedWorkload(Name(), p, epilogue, spec_.layout, inputs, computes, side_outputs);
    const double elements = static_cast<double>(s.Rows()) * static_cast<double>(s.Cols());
    const double outputs = spec_.output_per_row ? static_cast<double>(s.Rows()) : elements;
    const double residual = spec_.residual ? elements : 0;  // R read, the sum written
    w.flops = (spec_.flops_per_element + (spec_.residual ? 1 : 0)) * elements;
    w.min_bytes = TensorBytes(dtype, {elements, outputs, 2 * residual, static_cast<double>(spec_.weights.size() * s.Cols())});
    w.reference = RowReference(s, dtype);
    return w;
  }

 private:
  // The reference of every row; with a residual it writes the sums (rounded to `dtype` as the kernel
  // stores them), then the outputs, which normalize the rounded sums.
  std::function<void(const std::vector<const float*>&, float*)> RowReference(const RowShape& s, DType dtype) const {
    const int64_t rows = s.Rows(), cols = s.Cols();
    const int64_t out_stride = spec_.output_per_row ? 1 : cols;
    return [rows, cols, out_stride, dtype, residual = spec_.residual, reference = spec_.reference](
               const std::vector<const float*>& in, float* out) {
      const std::vector<const float*> weights(in.begin() + (residual ? 2 : 1), in.end());
      for (int64_t r = 0; r < rows; ++r) {
        const float* x = in[0] + r * cols;
        if (residual) {
          float* sum = out + r * cols;
          for (int64_t j = 0; j < cols; ++j) sum[j] = RoundedTo(dtype, x[j] + in[1][r * cols + j]);
          x = sum;
        }
        reference(cols, x, weights, out + (residual ? rows * cols : 0) + r * out_stride);
      }
    };
  }

  RowShape ShapeOf(const ShapeParams& p) const {
    RowShape s;
    for (size_t i = 0; i < p.size(); ++i) (i < spec_.row_params ? s.rows : s.cols).push_back(p[i].second);
    return s;
  }

  RowOperatorSpec spec_;
};

}  // namespace

int64_t RowShape::Rows() const {
  int64_t n = 1;
  for (int64_t r : rows) n *= r;
  return n;
}

int64_t RowShape::Cols() const {
  int64_t n = 1;
  for (int64_t c : cols) n *= c;
  return n;
}

te::Operation ReduceRows(const std::string& name, ReduceOp op, const RowShape& shape, const RowBody& value) {
  std::vector<te::IterVar> axes;
  std::vector<Var> col;
  const std::vector<std::string> names = AxisNames("r", shape.cols.size());
  for (size_t i = 0; i < shape.cols.size(); ++i) {
    axes.push_back(te::ReduceAxis(shape.cols[i], names[i]));
    col.push_back(axes.back().var);
  }
  return te::Compute(name, shape.rows, AxisNames("i", shape.rows.size()), [&](const std::vector<Var>& row) {
    const Expr v = value(row, col);
    return op == ReduceOp::kSum ? te::Sum(v, axes) : te::ReduceMax(v, axes);
  });
}

te::Operation MapRows(const std::string& name, const RowShape& shape, const RowBody& value) {
  std::vector<int64_t> dims = shape.rows;
  dims.insert(dims.end(), shape.cols.begin(), shape.cols.end());
  std::vector<std::string> names = AxisNames("i", shape.rows.size());
  for (const auto& n : AxisNames("j", shape.cols.size())) names.push_back(n);
  const size_t nr = shape.rows.size();
  return te::Compute(name, dims, names, [&](const std::vector<Var>& v) {
    return value(std::vector<Var>(v.begin(), v.begin() + nr), std::vector<Var>(v.begin() + nr, v.end()));
  });
}

Expr ReadRow(const te::Operation& x, const std::vector<Var>& row, const std::vector<Var>& col) {
  std::vector<Expr> idx(row.begin(), row.end());
  idx.insert(idx.end(), col.begin(), col.end());
  return ReadFloat32(x, idx);
}

Expr ReadCols(const te::Operation& w, const std::vector<Var>& col) {
  return ReadFloat32(w, std::vector<Expr>(col.begin(), col.end()));
}

Expr RoundTo(DType dtype, const Expr& x) { return dtype == DType::kFloat32 ? x : Cast(dtype, x); }

std::unique_ptr<OperatorDef> MakeRowOperator(RowOperatorSpec spec) { return std::make_unique<RowOperator>(std::move(spec)); }

RowOperatorSpec WithResidual(RowOperatorSpec spec) {
  // "X[M,N] W[N] -> Y[M,N]" becomes "X[M,N] R[M,N] W[N] -> sum[M,N] Y[M,N]".
  const std::string x = spec.layout.substr(0, spec.layout.find(' '));
  const std::string dims = x.substr(1);
  spec.layout = x + " R" + dims + spec.layout.substr(x.size());
  spec.layout.replace(spec.layout.find("-> "), 3, "-> sum" + dims + " ");
  spec.summary = "residual add, sum = X + R (an output too), then " + spec.summary + " with X the sum";
  spec.name = "add_" + spec.name;
  spec.residual = true;
  return spec;
}

}  // namespace autotune::tir
