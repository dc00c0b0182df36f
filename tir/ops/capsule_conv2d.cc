// capsule_conv2d: the convolution of capsule networks (Ansor's CAP, TVM's conv2d_capsule_nhwijc in
// NCHW order): every input and output pixel holds a PxP capsule matrix per channel, and a kernel tap
// multiplies the input's matrix by a PxP weight matrix, summing over input channels, the window and
// the inner capsule index:
//   out[n,k,i,j,y,x] = sum over c,q,r,s of data[n,c,i,q, y*stride+r-pad, x*stride+s-pad] * weight[k,c,q,j,r,s]
#include <fmt/format.h>

#include "tir/ops/builtin_operators.h"
#include "tir/ops/convolution.h"
#include "tir/ops/epilogue.h"

namespace autotune::tir {
namespace {

struct Capsule {
  ConvGeometry g;  // N, C, K, H, W, R, S, stride, pad (no dilation or groups)
  int64_t P = 4;

  std::vector<int64_t> DataShape() const { return {g.N, g.C, P, P, g.in[0], g.in[1]}; }
  std::vector<int64_t> WeightShape() const { return {g.K, g.C, P, P, g.kernel[0], g.kernel[1]}; }
  std::vector<int64_t> OutShape() const { return {g.N, g.K, P, P, g.Out(0), g.Out(1)}; }
};

double Elements(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t x : shape) n *= static_cast<double>(x);
  return n;
}

void CapsuleReference(const Capsule& cap, const float* data, const float* weight, float* out) {
  const ConvGeometry& g = cap.g;
  const int64_t P = cap.P, H = g.in[0], W = g.in[1], R = g.kernel[0], S = g.kernel[1], OH = g.Out(0), OW = g.Out(1);
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t k = 0; k < g.K; ++k) {
      for (int64_t i = 0; i < P; ++i) {
        for (int64_t j = 0; j < P; ++j) {
          for (int64_t y = 0; y < OH; ++y) {
            for (int64_t x = 0; x < OW; ++x) {
              double acc = 0;
              for (int64_t c = 0; c < g.C; ++c) {
                for (int64_t q = 0; q < P; ++q) {
                  const float* plane = data + (((n * g.C + c) * P + i) * P + q) * H * W;
                  const float* taps = weight + (((k * g.C + c) * P + q) * P + j) * R * S;
                  for (int64_t r = 0; r < R; ++r) {
                    const int64_t iy = y * g.stride - g.pad + r;
                    if (iy < 0 || iy >= H) continue;
                    for (int64_t s = 0; s < S; ++s) {
                      const int64_t ix = x * g.stride - g.pad + s;
                      if (ix >= 0 && ix < W) acc += static_cast<double>(plane[iy * W + ix]) * taps[r * S + s];
                    }
                  }
                }
              }
              out[((((n * g.K + k) * P + i) * P + j) * OH + y) * OW + x] = static_cast<float>(acc);
            }
          }
        }
      }
    }
  }
}

class CapsuleConv2dOperator : public OperatorDef {
 public:
  std::string Name() const override { return "capsule_conv2d"; }
  std::string Summary() const override {
    return "capsule 2-D convolution, N C PxP H W data x K C PxP R S weights -> N K PxP OH OW";
  }
  std::vector<ParamSpec> Params() const override {
    return {{"N", std::nullopt, "batch"},           {"C", std::nullopt, "input channels"},
            {"H", std::nullopt, "input height"},    {"W", std::nullopt, "input width"},
            {"K", std::nullopt, "output channels"}, {"R", std::nullopt, "kernel height"},
            {"S", std::nullopt, "kernel width"},    {"stride", 1, "stride (both dimensions)"},
            {"pad", 0, "zero padding (both dimensions)"}, {"capsule", 4, "side P of the PxP capsule matrices"}};
  }

  Result<void> Validate(const ShapeParams& p) const override {
    const Capsule cap = Unpack(p);
    if (auto r = ValidateConv(p, cap.g); !r) return r;
    std::vector<int64_t> padded = cap.DataShape();
    padded[4] += 2 * cap.g.pad;
    padded[5] += 2 * cap.g.pad;
    for (auto r : {CheckTensorSize("data", padded), CheckTensorSize("weight", cap.WeightShape()),
                   CheckTensorSize("conv", cap.OutShape())}) {
      if (!r) return r;
    }
    return {};
  }

  Workload Build(const ShapeParams& p, const Epilogue& epilogue, DType dtype, Precision) const override {
    const Capsule cap = Unpack(p);
    std::vector<te::Operation> inputs = {te::Placeholder("data", cap.DataShape(), dtype),
                                         te::Placeholder("weight", cap.WeightShape(), dtype)};
    std::vector<te::Operation> computes;
    AddEpilogue(Compute(cap, inputs[0], inputs[1], computes), 1, epilogue, dtype, inputs, computes);
    Workload w = StagedWorkload(Name(), p, epilogue, "data NCPPHW, weight KCPPRS -> out NKPPHW", inputs, computes);
    const double outputs = Elements(cap.OutShape());
    const double per_output = static_cast<double>(cap.g.C * cap.P * cap.g.kernel[0] * cap.g.kernel[1]);
    w.flops = 2.0 * outputs * per_output + EpilogueFlops(epilogue, outputs);
    w.min_bytes = TensorBytes(dtype, {Elements(cap.DataShape()), Elements(cap.WeightShape()), outputs}) +
                  EpilogueInputBytes(epilogue, dtype, static_cast<double>(cap.g.K), outputs);
    w.reference = [cap, epilogue](const std::vector<const float*>& in, float* out) {
      CapsuleReference(cap, in[0], in[1], out);
      ApplyEpilogueReference(epilogue, cap.OutShape(), 1, in.data() + 2, out);
    };
    return w;
  }

 private:
  static Capsule Unpack(const ShapeParams& p) {
    Capsule cap;
    cap.g.N = p[0].second;
    cap.g.C = p[1].second;
    cap.g.in = {p[2].second, p[3].second};
    cap.g.K = p[4].second;
    cap.g.kernel = {p[5].second, p[6].second};
    cap.g.stride = p[7].second;
    cap.g.pad = p[8].second;
    cap.P = p[9].second;
    return cap;
  }

  // The padded input (a stage of its own, which schedules inline) and the capsule convolution.
  static te::Operation Compute(const Capsule& cap, const te::Operation& data, const te::Operation& weight,
                               std::vector<te::Operation>& computes) {
    const ConvGeometry& g = cap.g;
    te::Operation padded = data;
    if (g.pad > 0) {
      std::vector<int64_t> shape = cap.DataShape();
      shape[4] += 2 * g.pad;
      shape[5] += 2 * g.pad;
      padded = te::Compute("pad", shape, {"n", "c", "i", "q", "yy", "xx"}, [&](const std::vector<Var>& v) {
        const Expr inside = And(And(GE(v[4], IntImm(g.pad)), LT(v[4], IntImm(g.in[0] + g.pad))),
                                And(GE(v[5], IntImm(g.pad)), LT(v[5], IntImm(g.in[1] + g.pad))));
        // The input's element type, as a convolution's padded input (tir/ops/convolution.cc).
        return Select(inside, te::Read(data, {v[0], v[1], v[2], v[3], v[4] - g.pad, v[5] - g.pad}), ZeroOf(data->dtype));
      });
      computes.push_back(padded);
    }
    const auto rc = te::ReduceAxis(g.C, "rc"), rq = te::ReduceAxis(cap.P, "rq");
    const auto ry = te::ReduceAxis(g.kernel[0], "ry"), rx = te::ReduceAxis(g.kernel[1], "rx");
    return te::Compute("conv", cap.OutShape(), {"n", "k", "i", "j", "y", "x"}, [&](const std::vector<Var>& v) {
      const Expr in = ReadFloat32(padded, {v[0], rc.var, v[2], rq.var, v[4] * g.stride + ry.var,
                                           v[5] * g.stride + rx.var});
      const Expr w = ReadFloat32(weight, {v[1], rc.var, rq.var, v[3], ry.var, rx.var});
      return te::Sum(Mul(in, w), {rc, rq, ry, rx});
    });
  }
};

}  // namespace

std::unique_ptr<OperatorDef> MakeCapsuleConv2dOperator() { return std::make_unique<CapsuleConv2dOperator>(); }

}  // namespace autotune::tir
