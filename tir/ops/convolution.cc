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
    AddEpilogue(conv, g.ChannelDim(), epilogue, dtype, inputs, computes);
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
      ApplyEpilogueReference(epilogue, g.OutShape(), g.ChannelDim(), in.data() + 2, out);
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
    g.channels_last = rank_.channels_last;
    return g;
  }

  ConvRank rank_;
};

}  // namespace

std::unique_ptr<OperatorDef> MakeConvOperator(ConvRank rank) { return std::make_unique<ConvOperator>(std::move(rank)); }

namespace {

// {outer, channels, spatial...}, or {outer, spatial..., channels} with channels last.
std::vector<int64_t> Laid(bool channels_last, int64_t outer, int64_t channels, const std::vector<int64_t>& spatial) {
  std::vector<int64_t> s = {outer};
  if (!channels_last) s.push_back(channels);
  s.insert(s.end(), spatial.begin(), spatial.end());
  if (channels_last) s.push_back(channels);
  return s;
}

}  // namespace

std::vector<int64_t> ConvGeometry::DataShape() const { return Laid(channels_last, N, C, in); }

std::vector<int64_t> ConvGeometry::WeightShape() const { return Laid(channels_last, K, Cg(), kernel); }

std::vector<int64_t> ConvGeometry::OutShape() const {
  std::vector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) out.push_back(Out(d));
  return Laid(channels_last, N, K, out);
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

namespace {

// Indices in the layout's order: {outer, channel, spatial...}, or {outer, spatial..., channel}.
std::vector<Expr> LaidIndices(bool channels_last, Expr outer, Expr channel, const std::vector<Expr>& spatial) {
  std::vector<Expr> idx = {std::move(outer)};
  if (!channels_last) idx.push_back(channel);
  idx.insert(idx.end(), spatial.begin(), spatial.end());
  if (channels_last) idx.push_back(std::move(channel));
  return idx;
}

// The spatial axes of a data or output index (after the outer one, before or after the channel).
std::vector<Expr> SpatialOf(const ConvGeometry& g, const std::vector<Var>& v) {
  const size_t first = g.channels_last ? 1 : 2;
  return std::vector<Expr>(v.begin() + first, v.begin() + first + g.in.size());
}

}  // namespace

te::Operation ConvCompute(const ConvGeometry& g, const ConvAxisNames& names, const te::Operation& data,
                          const te::Operation& weight, Precision precision, std::vector<te::Operation>& computes) {
  const size_t rank = g.in.size();
  const bool last = g.channels_last;
  te::Operation padded = data;
  if (g.pad > 0) {
    std::vector<int64_t> extents;
    for (int64_t x : g.in) extents.push_back(x + 2 * g.pad);
    // The padded input keeps the input's element type (padding changes no value): a tensor-core
    // schedule's copies of it are of 16-bit elements.
    padded = te::Compute("pad", Laid(last, g.N, g.C, extents), names.padded, [&](const std::vector<Var>& v) {
      Expr inside;
      std::vector<Expr> spatial;
      for (size_t d = 0; d < rank; ++d) {
        const Expr x = SpatialOf(g, v)[d];
        const Expr in_d = And(GE(x, IntImm(g.pad)), LT(x, IntImm(g.in[d] + g.pad)));
        inside = inside ? And(inside, in_d) : in_d;
        spatial.push_back(x - g.pad);
      }
      return Select(inside, te::Read(data, LaidIndices(last, v[0], v[g.ChannelDim()], spatial)), ZeroOf(data->dtype));
    });
    computes.push_back(padded);
  }
  // The reduction's axes in memory order: the channels first, or (channels last) after the window,
  // so that a matrix form's K runs along memory (a tensor-core copy of it in 16-byte runs).
  const te::IterVar channels = te::ReduceAxis(g.Cg(), names.reduce[0]);
  std::vector<te::IterVar> window, reduce;
  for (size_t d = 0; d < rank; ++d) window.push_back(te::ReduceAxis(g.kernel[d], names.reduce[1 + d]));
  if (!last) reduce.push_back(channels);
  reduce.insert(reduce.end(), window.begin(), window.end());
  if (last) reduce.push_back(channels);
  return te::Compute("conv", g.OutShape(), names.out, [&](const std::vector<Var>& v) {
    const Var& rc = channels.var;
    const Expr k = v[g.ChannelDim()];
    Expr channel = g.groups == 1 ? Expr(rc) : FloorDiv(k, IntImm(g.Kg())) * g.Cg() + rc;
    std::vector<Expr> at, taps;
    for (size_t d = 0; d < rank; ++d) {
      at.push_back(SpatialOf(g, v)[d] * g.stride + window[d].var * g.dilation);
      taps.push_back(window[d].var);
    }
    return te::Sum(ProductAt(ReadFloat32(padded, LaidIndices(last, v[0], channel, at)),
                             ReadFloat32(weight, LaidIndices(last, k, rc, taps)), precision),
                   reduce);
  });
}

namespace {

void ChannelsFirstReference(const ConvGeometry& g, const float* data, const float* weight, float* out) {
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

// [outer][channels][spatial] <-> [outer][spatial][channels].
std::vector<float> MoveChannels(const float* src, int64_t outer, int64_t channels, int64_t spatial, bool to_last) {
  std::vector<float> dst(static_cast<size_t>(outer * channels * spatial));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t x = 0; x < spatial; ++x) {
        const int64_t first = (o * channels + c) * spatial + x, last = (o * spatial + x) * channels + c;
        dst[to_last ? last : first] = src[to_last ? first : last];
      }
    }
  }
  return dst;
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

}  // namespace

// Channels last: the channels-first reference on transposed copies (a reference needs no speed).
void ConvReference(const ConvGeometry& g, const float* data, const float* weight, float* out) {
  if (!g.channels_last) return ChannelsFirstReference(g, data, weight, out);
  ConvGeometry first = g;
  first.channels_last = false;
  std::vector<int64_t> out_spatial;
  for (size_t d = 0; d < g.in.size(); ++d) out_spatial.push_back(g.Out(d));
  const int64_t pixels = Product(out_spatial);
  const std::vector<float> d = MoveChannels(data, g.N, g.C, Product(g.in), /*to_last=*/false);
  const std::vector<float> w = MoveChannels(weight, g.K, g.Cg(), Product(g.kernel), /*to_last=*/false);
  std::vector<float> o(static_cast<size_t>(g.N * g.K * pixels));
  ChannelsFirstReference(first, d.data(), w.data(), o.data());
  const std::vector<float> moved = MoveChannels(o.data(), g.N, g.K, pixels, /*to_last=*/true);
  std::copy(moved.begin(), moved.end(), out);
}

}  // namespace autotune::tir
