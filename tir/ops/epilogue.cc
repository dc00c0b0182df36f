#include "tir/ops/epilogue.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace autotune::tir {

te::Operation AddEpilogue(const te::Operation& main, int channel_dim, const Epilogue& epilogue, DType dtype,
                          std::vector<te::Operation>& inputs, std::vector<te::Operation>& computes) {
  computes.push_back(main);
  if (!epilogue.bias && !epilogue.relu && dtype == DType::kFloat32) return main;
  te::Operation bias;
  if (epilogue.bias) {
    bias = te::Placeholder("bias", {main->shape[channel_dim]}, dtype);
    inputs.push_back(bias);
  }
  std::vector<std::string> names;
  for (const auto& a : main->axis) names.push_back(a.var->name);
  std::string name = main->name + (epilogue.bias ? "_bias" : "") + (epilogue.relu ? "_relu" : "") +
                     (dtype == DType::kFloat32 ? "" : std::string("_") + DTypeName(dtype));
  auto out = te::Compute(name, main->shape, names, [&](const std::vector<Var>& v) {
    std::vector<Expr> idx(v.begin(), v.end());
    Expr x = te::Read(main, idx);
    if (bias) x = Add(x, ReadFloat32(bias, {v[channel_dim]}));
    if (epilogue.relu) x = Max(x, FloatImm(0.0));
    return dtype == DType::kFloat32 ? x : Cast(dtype, x);
  });
  computes.push_back(out);
  return out;
}

Expr ReadFloat32(const te::Operation& t, const std::vector<Expr>& indices) {
  Expr x = te::Read(t, indices);
  return IsHalf(t->dtype) ? Cast(DType::kFloat32, x) : x;
}

double TensorBytes(DType dtype, std::initializer_list<double> element_counts) {
  double n = 0;
  for (double c : element_counts) n += c;
  return n * BytesOf(dtype);
}

void ApplyEpilogueReference(const Epilogue& epilogue, const std::vector<int64_t>& out_shape, int channel_dim,
                            const float* bias, float* out) {
  if (!epilogue.bias && !epilogue.relu) return;
  int64_t inner = 1;
  for (size_t d = channel_dim + 1; d < out_shape.size(); ++d) inner *= out_shape[d];
  int64_t channels = out_shape[channel_dim];
  int64_t total = 1;
  for (int64_t d : out_shape) total *= d;
  for (int64_t i = 0; i < total; ++i) {
    double x = out[i];
    if (epilogue.bias) x += bias[(i / inner) % channels];
    if (epilogue.relu) x = std::max(x, 0.0);
    out[i] = static_cast<float>(x);
  }
}

Result<void> CheckTensorSize(const std::string& name, const std::vector<int64_t>& shape) {
  // int32 indices: every tensor must have fewer than 2^31 elements.
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  if (n >= static_cast<double>(std::numeric_limits<int32_t>::max())) {
    return MakeError(fmt::format("tensor {} would have {:.0f} elements; at most 2^31-1 are supported", name, n));
  }
  return {};
}

}  // namespace autotune::tir
