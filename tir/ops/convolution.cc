#include "tir/ops/convolution.h"

#include <fmt/format.h>

#include <algorithm>

#include "tir/ops/epilogue.h"
#include "tir/te/compute_dag.h"

namespace autotune::tir {
namespace {

std::string JoinX(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

// The spatial dimensions as three, the missing outer ones of extent 1 and without padding (the
// reference runs one loop nest for every rank).
struct Dims3 {
  int64_t in[3], kernel[3], pad[3], out[3];
  explicit Dims3(const ConvGeometry& g) {
    const size_t missing = 3 - g.in.size();
    for (size_t d = 0; d < 3; ++d) {
      const bool real = d >= missing;
      in[d] = real ? g.in[d - missing] : 1;
      kernel[d] = real ? g.kernel[d - missing] : 1;
      pad[d] = real ? g.pad : 0;
      out[d] = real ? g.Out(d - missing) : 1;
    }
  }
};

class ConvOperator : public OperatorDef {
 public:
  explicit ConvOperator(ConvRank rank) : rank_(std::move(rank)) {}
  std::string Name() const override { return rank_.name; }
  std::string Summary() const override { return rank_.summary; }
  bool TakesPrecision() const override { return true; }
  std::vector<ParamSpec> Params() const override {
    const std::string dims = rank_.dimensions.empty() ? "" : " (" + rank_.dimensions + " dimensions)";
    std::vector<ParamSpec> p = {{"N", std::nullopt, "batch"}, {"C", std::nullopt, "input channels"}};
    p.insert(p.end(), rank_.spatial.begin(), rank_.spatial.end());
    p.push_back({"K", std::nullopt, "output channels"});
    p.insert(p.end(), rank_.kernel.begin(), rank_.kernel.end());
    p.push_back({"stride", 1, "stride" + dims});
    p.push_back({"pad", 0, "zero padding" + dims});
    p.push_back({"dilation", 1, "dilation" + dims});
    p.push_back({"groups", 1, "groups; C and K must be multiples"});
    return p;
  }

  Result<void> Validate(const ShapeParams& p) const override { return ValidateConv(p, Unpack(p)); }

  Workload Build(const ShapeParams& p, const Epilogue& epilogue, DType dtype, Precision precision) const override {
    const ConvGeometry g = Unpack(p);
    std::vector<te::Operation> inputs = {te::Placeholder("data", g.DataShape(), dtype),
                                         te::Placeholder("weight", g.WeightShape(), dtype)};
    std::vector<te::Operation> computes;
    const te::Operation conv = ConvCompute(g, rank_.axes, inputs[0], inputs[1], precision, computes);
    AddEpilogue(conv, 1, epilogue, dtype, inputs, computes);
    double window = 1;
    for (int64_t k : g.kernel) window *= static_cast<double>(k);
    Workload w = StagedWorkload(Name(), p, epilogue, rank_.layout, inputs, computes);
    const double outputs = g.Outputs();
    double data_elements = 1, weight_elements = 1;
    for (int64_t x : g.DataShape()) data_elements *= static_cast<double>(x);
    for (int64_t x : g.WeightShape()) weight_elements *= static_cast<double>(x);
    w.flops = 2.0 * outputs * static_cast<double>(g.Cg()) * window + EpilogueFlops(epilogue, outputs);
    w.min_bytes = TensorBytes(dtype, {data_elements, weight_elements, outputs}) +
                  EpilogueInputBytes(epilogue, dtype, static_cast<double>(g.K), outputs);
    w.reference = [g, epilogue](const std::vector<const float*>& in, float* out) {
      ConvReference(g, in[0], in[1], out);
      ApplyEpilogueReference(epilogue, g.OutShape(), 1, in.data() + 2, out);
    };
    w.reference = ReferenceAt(precision, {static_cast<int64_t>(data_elements), static_cast<int64_t>(weight_elements)},
                              std::move(w.reference));
    w.precision = precision;
    return w;
  }

 private:
  // Parameters in Params() order.
  ConvGeometry Unpack(const ShapeParams& p) const {
    const size_t rank = rank_.spatial.size();
    ConvGeometry g;
    g.N = p[0].second;
    g.C = p[1].second;
    for (size_t d = 0; d < rank; ++d) g.in.push_back(p[2 + d].second);
    g.K = p[2 + rank].second;
    for (size_t d = 0; d < rank; ++d) g.kernel.push_back(p[3 + rank + d].second);
    g.stride = p[3 + 2 * rank].second;
    g.pad = p[4 + 2 * rank].second;
    g.dilation = p[5 + 2 * rank].second;
    g.groups = p[6 + 2 * rank].second;
    return g;
  }

  ConvRank rank_;
};

}  // namespace

std::unique_ptr<OperatorDef> MakeConvOperator(ConvRank rank) { return std::make_unique<ConvOperator>(std::move(rank)); }

std::vector<int64_t> ConvGeometry::DataShape() const {
  std::vector<int64_t> s = {N, C};
  s.insert(s.end(), in.begin(), in.end());
  return s;
}

std::vector<int64_t> ConvGeometry::WeightShape() const {
  std::vector<int64_t> s = {K, Cg()};
  s.insert(s.end(), kernel.begin(), kernel.end());
  return s;
}

std::vector<int64_t> ConvGeometry::OutShape() const {
  std::vector<int64_t> s = {N, K};
  for (size_t d = 0; d < in.size(); ++d) s.push_back(Out(d));
  return s;
}

double ConvGeometry::Outputs() const {
  double n = 1;
  for (int64_t x : OutShape()) n *= static_cast<double>(x);
  return n;
}

Result<void> ValidateConv(const ShapeParams& params, const ConvGeometry& g) {
  for (const auto& [k, v] : params) {
    if (k == "pad" ? v < 0 : v < 1) return MakeError(fmt::format("{}={} must be at least {}", k, v, k == "pad" ? 0 : 1));
  }
  if (g.C % g.groups != 0) return MakeError(fmt::format("C={} is not a multiple of groups={}", g.C, g.groups));
  if (g.K % g.groups != 0) return MakeError(fmt::format("K={} is not a multiple of groups={}", g.K, g.groups));
  std::vector<int64_t> padded, dilated;
  bool fits = true;
  for (size_t d = 0; d < g.in.size(); ++d) {
    padded.push_back(g.in[d] + 2 * g.pad);
    dilated.push_back(g.dilation * (g.kernel[d] - 1) + 1);
    fits &= padded.back() >= dilated.back();
  }
  if (!fits) {
    return MakeError(fmt::format("the {}{} kernel is larger than the padded {} input", g.dilation > 1 ? "dilated " : "",
                                 JoinX(g.kernel), JoinX(padded)));
  }
  std::vector<int64_t> padded_data = {g.N, g.C};
  padded_data.insert(padded_data.end(), padded.begin(), padded.end());
  for (auto r : {CheckTensorSize("data", padded_data), CheckTensorSize("weight", g.WeightShape()),
                 CheckTensorSize("conv", g.OutShape())}) {
    if (!r) return r;
  }
  return {};
}

te::Operation ConvCompute(const ConvGeometry& g, const ConvAxisNames& names, const te::Operation& data,
                          const te::Operation& weight, Precision precision, std::vector<te::Operation>& computes) {
  const size_t rank = g.in.size();
  te::Operation padded = data;
  if (g.pad > 0) {
    std::vector<int64_t> shape = {g.N, g.C};
    for (int64_t x : g.in) shape.push_back(x + 2 * g.pad);
    // The padded input keeps the input's element type (padding changes no value): a tensor-core
    // schedule's copies of it are of 16-bit elements.
    padded = te::Compute("pad", shape, names.padded, [&](const std::vector<Var>& v) {
      Expr inside;
      std::vector<Expr> idx = {v[0], v[1]};
      for (size_t d = 0; d < rank; ++d) {
        const Expr x = v[2 + d];
        const Expr in_d = And(GE(x, IntImm(g.pad)), LT(x, IntImm(g.in[d] + g.pad)));
        inside = inside ? And(inside, in_d) : in_d;
        idx.push_back(x - g.pad);
      }
      return Select(inside, te::Read(data, idx), ZeroOf(data->dtype));
    });
    computes.push_back(padded);
  }
  std::vector<te::IterVar> reduce = {te::ReduceAxis(g.Cg(), names.reduce[0])};
  for (size_t d = 0; d < rank; ++d) reduce.push_back(te::ReduceAxis(g.kernel[d], names.reduce[1 + d]));
  return te::Compute("conv", g.OutShape(), names.out, [&](const std::vector<Var>& v) {
    const Var& rc = reduce[0].var;
    Expr channel = g.groups == 1 ? Expr(rc) : FloorDiv(v[1], IntImm(g.Kg())) * g.Cg() + rc;
    std::vector<Expr> at = {v[0], channel}, w = {v[1], rc};
    for (size_t d = 0; d < rank; ++d) {
      at.push_back(v[2 + d] * g.stride + reduce[1 + d].var * g.dilation);
      w.push_back(reduce[1 + d].var);
    }
    return te::Sum(ProductAt(ReadFloat32(padded, at), ReadFloat32(weight, w), precision), reduce);
  });
}

void ConvReference(const ConvGeometry& g, const float* data, const float* weight, float* out) {
  const Dims3 s(g);
  const int64_t D = s.in[0], H = s.in[1], W = s.in[2];
  const int64_t OD = s.out[0], OH = s.out[1], OW = s.out[2];
  const int64_t Cg = g.Cg(), Kg = g.Kg();
  std::vector<double> acc(OD * OH * OW);
  // Input index along dimension d for output o and kernel offset r, or -1 in the padding.
  auto at = [&](size_t d, int64_t o, int64_t r) {
    const int64_t i = o * g.stride - s.pad[d] + r * g.dilation;
    return i < 0 || i >= s.in[d] ? -1 : i;
  };
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t k = 0; k < g.K; ++k) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t c = 0; c < Cg; ++c) {
        const float* volume = data + (n * g.C + (k / Kg) * Cg + c) * D * H * W;
        const float* taps = weight + (k * Cg + c) * s.kernel[0] * s.kernel[1] * s.kernel[2];
        for (int64_t q = 0; q < s.kernel[0]; ++q) {
          for (int64_t r = 0; r < s.kernel[1]; ++r) {
            for (int64_t t = 0; t < s.kernel[2]; ++t) {
              const double wv = taps[(q * s.kernel[1] + r) * s.kernel[2] + t];
              for (int64_t z = 0; z < OD; ++z) {
                const int64_t iz = at(0, z, q);
                if (iz < 0) continue;
                for (int64_t y = 0; y < OH; ++y) {
                  const int64_t iy = at(1, y, r);
                  if (iy < 0) continue;
                  const float* row = volume + (iz * H + iy) * W;
                  double* o = acc.data() + (z * OH + y) * OW;
                  for (int64_t x = 0; x < OW; ++x) {
                    const int64_t ix = at(2, x, t);
                    if (ix >= 0) o[x] += wv * row[ix];
                  }
                }
              }
            }
          }
        }
      }
      float* o = out + (n * g.K + k) * OD * OH * OW;
      for (int64_t i = 0; i < OD * OH * OW; ++i) o[i] = static_cast<float>(acc[i]);
    }
  }
}

}  // namespace autotune::tir
