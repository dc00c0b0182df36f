#include "tir/ops/epilogue.h"

#include "support/check.h"
#include "tir/te/compute_dag.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace autotune::tir {

bool TakesInput(EpiloguePart p) {
  return p == EpiloguePart::kBias || p == EpiloguePart::kScale || p == EpiloguePart::kShift ||
         p == EpiloguePart::kResidual;
}

namespace {


// An activation of x, in float32.
Expr Activation(EpiloguePart p, const Expr& x) {
  const Expr half = FloatImm(0.5), one = FloatImm(1.0);
  switch (p) {
    case EpiloguePart::kRelu: return Max(x, FloatImm(0.0));
    case EpiloguePart::kRelu6: return Min(Max(x, FloatImm(0.0)), FloatImm(6.0));
    case EpiloguePart::kGelu:
      return Mul(Mul(half, x), Add(one, Call(DType::kFloat32, "erf", {Mul(x, FloatImm(kInvSqrt2))})));
    case EpiloguePart::kGeluTanh: {
      const Expr inner = Mul(FloatImm(kSqrt2OverPi), Add(x, Mul(FloatImm(kGeluTanhCubic), Mul(x, Mul(x, x)))));
      return Mul(Mul(half, x), Add(one, Call(DType::kFloat32, "tanh", {inner})));
    }
    case EpiloguePart::kSilu: return Mul(x, Call(DType::kFloat32, "sigmoid", {x}));
    default: return x;
  }
}

}  // namespace

te::Operation AddEpilogue(const te::Operation& main, int channel_dim, const Epilogue& epilogue, DType dtype,
                          std::vector<te::Operation>& inputs, std::vector<te::Operation>& computes) {
  computes.push_back(main);
  if (epilogue.empty() && dtype == DType::kFloat32) return main;
  std::vector<te::Operation> part_inputs;  // per part: its input, or none
  for (EpiloguePart p : epilogue.parts) {
    te::Operation in;
    if (TakesInput(p)) {
      const std::vector<int64_t> shape =
          p == EpiloguePart::kResidual ? main->shape : std::vector<int64_t>{main->shape[channel_dim]};
      in = te::Placeholder(EpiloguePartName(p), shape, dtype);
      inputs.push_back(in);
    }
    part_inputs.push_back(in);
  }
  std::vector<std::string> names;
  for (const auto& a : main->axis) names.push_back(a.var->name);
  std::string name = main->name;
  for (EpiloguePart p : epilogue.parts) name += std::string("_") + EpiloguePartName(p);
  if (dtype != DType::kFloat32) name += std::string("_") + DTypeName(dtype);
  auto out = te::Compute(name, main->shape, names, [&](const std::vector<Var>& v) {
    std::vector<Expr> idx(v.begin(), v.end());
    Expr x = te::Read(main, idx);
    for (size_t i = 0; i < epilogue.parts.size(); ++i) {
      const EpiloguePart p = epilogue.parts[i];
      const te::Operation& in = part_inputs[i];
      if (p == EpiloguePart::kScale) {
        x = Mul(x, ReadFloat32(in, {v[channel_dim]}));
      } else if (p == EpiloguePart::kResidual) {
        x = Add(x, ReadFloat32(in, idx));
      } else if (in) {
        x = Add(x, ReadFloat32(in, {v[channel_dim]}));  // bias, shift
      } else {
        x = Activation(p, x);
      }
    }
    return dtype == DType::kFloat32 ? x : Cast(dtype, x);
  });
  computes.push_back(out);
  return out;
}

Workload StagedWorkload(const std::string& op, const ShapeParams& shape, const Epilogue& epilogue, std::string layout,
                        const std::vector<te::Operation>& inputs, const std::vector<te::Operation>& computes,
                        const std::vector<te::Operation>& side_outputs) {
  Workload w;
  w.op = op;
  w.shape = shape;
  w.epilogue = epilogue.Text();
  w.layout = std::move(layout);
  for (const auto& in : inputs) w.inputs.push_back({in->name, in->dtype, in->shape});
  const te::Operation& out = computes.back();
  w.output = {out->name, out->dtype, out->shape};
  for (const auto& side : side_outputs) {
    AUTOTUNE_CHECK(side->dtype == out->dtype, "side outputs have the output's element type");
    w.side_outputs.push_back({side->name, side->dtype, side->shape});
  }
  w.dag = std::make_shared<te::ComputeDAG>(te::ComputeDAG::Make(inputs, computes, side_outputs));
  return w;
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

double EpilogueFlops(const Epilogue& epilogue, double outputs) {
  double flops = 0;
  for (EpiloguePart p : epilogue.parts) flops += TakesInput(p) ? outputs : 0.0;
  return flops;
}

double EpilogueInputBytes(const Epilogue& epilogue, DType dtype, double channels, double outputs) {
  double elements = 0;
  for (EpiloguePart p : epilogue.parts) {
    if (TakesInput(p)) elements += p == EpiloguePart::kResidual ? outputs : channels;
  }
  return elements * BytesOf(dtype);
}

void ApplyEpilogueReference(const Epilogue& epilogue, const std::vector<int64_t>& out_shape, int channel_dim,
                            const float* const* inputs, float* out) {
  if (epilogue.empty()) return;
  int64_t inner = 1;
  for (size_t d = channel_dim + 1; d < out_shape.size(); ++d) inner *= out_shape[d];
  const int64_t channels = out_shape[channel_dim];
  int64_t total = 1;
  for (int64_t d : out_shape) total *= d;
  for (int64_t i = 0; i < total; ++i) {
    const int64_t c = (i / inner) % channels;
    double x = out[i];
    const float* const* in = inputs;
    for (EpiloguePart p : epilogue.parts) {
      if (p == EpiloguePart::kScale) {
        x *= (*in++)[c];
      } else if (p == EpiloguePart::kResidual) {
        x += (*in++)[i];
      } else if (TakesInput(p)) {
        x += (*in++)[c];
      } else {
        x = ApplyActivation(p, x);
      }
    }
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
