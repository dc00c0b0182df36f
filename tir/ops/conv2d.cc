// conv2d: NCHW activations, KCRS weights; stride, padding, dilation and groups (depthwise is
// groups = C = K). Padding is its own stage so schedules can inline it.
#include <fmt/format.h>

#include "tir/ops/builtin_operators.h"
#include "tir/ops/epilogue.h"
#include "tir/te/compute_dag.h"

namespace autotune::tir {
namespace {

struct ConvShape {
  int64_t N, C, H, W, K, R, S, stride, pad, dilation, groups;
  int64_t OH() const { return (H + 2 * pad - dilation * (R - 1) - 1) / stride + 1; }
  int64_t OW() const { return (W + 2 * pad - dilation * (S - 1) - 1) / stride + 1; }
};

ConvShape Unpack(const ShapeParams& p) {
  return {p[0].second, p[1].second, p[2].second, p[3].second, p[4].second, p[5].second,
          p[6].second, p[7].second, p[8].second, p[9].second, p[10].second};
}

class Conv2dOperator : public OperatorDef {
 public:
  std::string Name() const override { return "conv2d"; }
  std::string Summary() const override {
    return "2-D convolution, NCHW data x KCRS weights -> NKPQ (grouped and depthwise via groups)";
  }
  std::vector<ParamSpec> Params() const override {
    return {{"N", std::nullopt, "batch"},
            {"C", std::nullopt, "input channels"},
            {"H", std::nullopt, "input height"},
            {"W", std::nullopt, "input width"},
            {"K", std::nullopt, "output channels"},
            {"R", std::nullopt, "kernel height"},
            {"S", std::nullopt, "kernel width"},
            {"stride", 1, "stride (both dimensions)"},
            {"pad", 0, "zero padding (both dimensions)"},
            {"dilation", 1, "dilation (both dimensions)"},
            {"groups", 1, "groups; C and K must be multiples"}};
  }

  Result<void> Validate(const ShapeParams& p) const override {
    for (const auto& [k, v] : p) {
      if (k == "pad" ? v < 0 : v < 1) {
        return MakeError(fmt::format("{}={} must be at least {}", k, v, k == "pad" ? 0 : 1));
      }
    }
    ConvShape s = Unpack(p);
    if (s.C % s.groups != 0) return MakeError(fmt::format("C={} is not a multiple of groups={}", s.C, s.groups));
    if (s.K % s.groups != 0) return MakeError(fmt::format("K={} is not a multiple of groups={}", s.K, s.groups));
    if (s.H + 2 * s.pad < s.dilation * (s.R - 1) + 1 || s.W + 2 * s.pad < s.dilation * (s.S - 1) + 1) {
      return MakeError(fmt::format("the dilated {}x{} kernel is larger than the padded {}x{} input", s.R, s.S,
                                   s.H + 2 * s.pad, s.W + 2 * s.pad));
    }
    for (auto r : {CheckTensorSize("data", {s.N, s.C, s.H + 2 * s.pad, s.W + 2 * s.pad}),
                   CheckTensorSize("weight", {s.K, s.C / s.groups, s.R, s.S}),
                   CheckTensorSize("conv", {s.N, s.K, s.OH(), s.OW()})}) {
      if (!r) return r;
    }
    return {};
  }

  Workload Build(const ShapeParams& p, const Epilogue& epilogue, DType dtype) const override {
    const ConvShape s = Unpack(p);
    const int64_t Cg = s.C / s.groups, Kg = s.K / s.groups, OH = s.OH(), OW = s.OW();
    std::vector<te::Operation> inputs = {te::Placeholder("data", {s.N, s.C, s.H, s.W}, dtype),
                                         te::Placeholder("weight", {s.K, Cg, s.R, s.S}, dtype)};
    std::vector<te::Operation> computes;
    te::Operation padded = inputs[0];
    if (s.pad > 0) {
      padded = te::Compute("pad", {s.N, s.C, s.H + 2 * s.pad, s.W + 2 * s.pad}, {"n", "c", "y", "x"},
                           [&](const std::vector<Var>& v) {
                             Expr y = v[2], x = v[3];
                             Expr inside = And(And(GE(y, IntImm(s.pad)), LT(y, IntImm(s.H + s.pad))),
                                               And(GE(x, IntImm(s.pad)), LT(x, IntImm(s.W + s.pad))));
                             return Select(inside, ReadFloat32(inputs[0], {v[0], v[1], y - s.pad, x - s.pad}),
                                           FloatImm(0.0));
                           });
      computes.push_back(padded);
    }
    auto rc = te::ReduceAxis(Cg, "rc");
    auto ry = te::ReduceAxis(s.R, "ry");
    auto rx = te::ReduceAxis(s.S, "rx");
    auto conv = te::Compute("conv", {s.N, s.K, OH, OW}, {"n", "k", "p", "q"}, [&](const std::vector<Var>& v) {
      Expr channel = s.groups == 1 ? Expr(rc.var) : FloorDiv(v[1], IntImm(Kg)) * Cg + rc.var;
      Expr y = v[2] * s.stride + ry.var * s.dilation;
      Expr x = v[3] * s.stride + rx.var * s.dilation;
      return te::Sum(Mul(ReadFloat32(padded, {v[0], channel, y, x}), ReadFloat32(inputs[1], {v[1], rc.var, ry.var, rx.var})),
                     {rc, ry, rx});
    });
    auto out = AddEpilogue(conv, 1, epilogue, dtype, inputs, computes);

    Workload w;
    w.op = Name();
    w.shape = p;
    w.epilogue = epilogue.Text();
    w.layout = "data NCHW, weight KCRS -> out NKPQ";
    for (const auto& in : inputs) w.inputs.push_back({in->name, in->dtype, in->shape});
    w.output = {out->name, out->dtype, out->shape};
    const double outputs = 1.0 * s.N * s.K * OH * OW;
    w.flops = 2.0 * outputs * Cg * s.R * s.S + EpilogueFlops(epilogue, outputs);
    w.min_bytes = TensorBytes(dtype, {1.0 * s.N * s.C * s.H * s.W, 1.0 * s.K * Cg * s.R * s.S, outputs}) +
                  EpilogueInputBytes(epilogue, dtype, 1.0 * s.K, outputs);
    w.reference = [s, Cg, Kg, OH, OW, epilogue](const std::vector<const float*>& in, float* out) {
      const float* data = in[0];
      const float* weight = in[1];
      std::vector<double> acc(OH * OW);
      for (int64_t n = 0; n < s.N; ++n) {
        for (int64_t k = 0; k < s.K; ++k) {
          std::fill(acc.begin(), acc.end(), 0.0);
          const int64_t g = k / Kg;
          for (int64_t c = 0; c < Cg; ++c) {
            const float* plane = data + ((n * s.C) + g * Cg + c) * s.H * s.W;
            for (int64_t r = 0; r < s.R; ++r) {
              for (int64_t t = 0; t < s.S; ++t) {
                const double wv = weight[((k * Cg + c) * s.R + r) * s.S + t];
                for (int64_t y = 0; y < OH; ++y) {
                  const int64_t iy = y * s.stride - s.pad + r * s.dilation;
                  if (iy < 0 || iy >= s.H) continue;
                  for (int64_t x = 0; x < OW; ++x) {
                    const int64_t ix = x * s.stride - s.pad + t * s.dilation;
                    if (ix < 0 || ix >= s.W) continue;
                    acc[y * OW + x] += wv * plane[iy * s.W + ix];
                  }
                }
              }
            }
          }
          float* o = out + (n * s.K + k) * OH * OW;
          for (int64_t i = 0; i < OH * OW; ++i) o[i] = static_cast<float>(acc[i]);
        }
      }
      ApplyEpilogueReference(epilogue, {s.N, s.K, OH, OW}, 1, in.data() + 2, out);
    };
    w.dag = std::make_shared<te::ComputeDAG>(te::ComputeDAG::Make(inputs, computes));
    return w;
  }
};

}  // namespace

std::unique_ptr<OperatorDef> MakeConv2dOperator() { return std::make_unique<Conv2dOperator>(); }

}  // namespace autotune::tir
