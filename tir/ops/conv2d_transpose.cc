// conv2d_transpose: the gradient of conv2d with respect to its input, as PyTorch's conv_transpose2d:
// NCHW data, weights C x K/groups x R x S, out[n, k, y*stride - pad + r*dilation, ...] += data[n, c,
// y, ...] * weight[c, k, r, ...]. Computed as a gather so it is a reduction like every other operator.
// With a stride and no dilation, by phases: output row y = t*stride + ph - pad meets only the kernel
// rows ph, ph + stride, ... and the input rows t, t - 1, ...: ceil(R/stride) taps a row instead of R
// (a quarter of the products for Ansor's 4x4 stride-2 layers). A "pad" stage pads the input with
// zeros for the taps that fall outside it; taps past the kernel's edge read a zero weight.
// Otherwise a "pad" stage spreads the input out (stride - 1 zeros between elements) and pads it by
// dilation * (R - 1) - pad, and a convolution with the kernel flipped reads it.
#include <fmt/format.h>

#include <utility>

#include "tir/ops/builtin_operators.h"
#include "tir/ops/epilogue.h"
#include "tir/te/compute_dag.h"

namespace autotune::tir {
namespace {

struct TransposeShape {
  int64_t N, C, H, W, K, R, S, stride, pad, output_padding, dilation, groups;
  int64_t Out(int64_t in, int64_t kernel) const {
    return (in - 1) * stride - 2 * pad + dilation * (kernel - 1) + output_padding + 1;
  }
  int64_t OH() const { return Out(H, R); }
  int64_t OW() const { return Out(W, S); }
  // How far the spread input is shifted: output y reads spread rows y .. y + dilation * (R - 1).
  int64_t ShiftY() const { return dilation * (R - 1) - pad; }
  int64_t ShiftX() const { return dilation * (S - 1) - pad; }
  bool Phased() const { return stride > 1 && dilation == 1; }
  // Phased: taps a row (column), and the padded input's extent: input row t - j is padded row t - j + taps - 1.
  int64_t Taps(int64_t kernel) const { return (kernel + stride - 1) / stride; }
  int64_t PhasedExtent(int64_t out, int64_t pad_, int64_t kernel) const { return (out - 1 + pad_) / stride + Taps(kernel); }
};

TransposeShape Unpack(const ShapeParams& p) {
  return {p[0].second, p[1].second, p[2].second, p[3].second,  p[4].second,  p[5].second,
          p[6].second, p[7].second, p[8].second, p[9].second, p[10].second, p[11].second};
}

// The input channel that output channel `k` reads at reduction step `rc`, and k's index in its group.
std::pair<Expr, Expr> GroupChannels(const TransposeShape& s, const Var& k, const Var& rc) {
  if (s.groups == 1) return {rc, k};
  const int64_t Cg = s.C / s.groups, Kg = s.K / s.groups;
  return {FloorDiv(k, IntImm(Kg)) * Cg + rc, FloorMod(k, IntImm(Kg))};
}

// The gather over the spread input (stride - 1 zeros between its elements), the kernel flipped.
te::Operation SpreadConv(const TransposeShape& s, const std::vector<te::Operation>& inputs,
                         std::vector<te::Operation>& computes) {
  const int64_t Cg = s.C / s.groups, OH = s.OH(), OW = s.OW();
  te::Operation spread = inputs[0];
  if (s.stride > 1 || s.ShiftY() != 0 || s.ShiftX() != 0 || s.output_padding > 0) {
    spread = te::Compute("pad", {s.N, s.C, OH + s.dilation * (s.R - 1), OW + s.dilation * (s.S - 1)},
                         {"n", "c", "y", "x"}, [&](const std::vector<Var>& v) {
                           // t = y - shift lands on input row t / stride when t is a multiple of it.
                           auto on_grid = [&](const Expr& t, int64_t extent) {
                             Expr c = And(GE(t, IntImm(0)), LT(t, IntImm((extent - 1) * s.stride + 1)));
                             return s.stride == 1 ? c : And(c, EQ(FloorMod(t, IntImm(s.stride)), IntImm(0)));
                           };
                           const Expr ty = Expr(v[2]) - s.ShiftY(), tx = Expr(v[3]) - s.ShiftX();
                           auto row = [&](const Expr& t) { return s.stride == 1 ? t : FloorDiv(t, IntImm(s.stride)); };
                           return Select(And(on_grid(ty, s.H), on_grid(tx, s.W)),
                                         ReadFloat32(inputs[0], {v[0], v[1], row(ty), row(tx)}), FloatImm(0.0));
                         });
    computes.push_back(spread);
  }
  auto rc = te::ReduceAxis(Cg, "rc");
  auto ry = te::ReduceAxis(s.R, "ry");
  auto rx = te::ReduceAxis(s.S, "rx");
  return te::Compute("conv", {s.N, s.K, OH, OW}, {"n", "k", "p", "q"}, [&](const std::vector<Var>& v) {
    const auto [channel, k_in_group] = GroupChannels(s, v[1], rc.var);
    Expr y = v[2] + ry.var * s.dilation, x = v[3] + rx.var * s.dilation;
    Expr flipped_r = IntImm(s.R - 1) - ry.var, flipped_s = IntImm(s.S - 1) - rx.var;
    return te::Sum(Mul(ReadFloat32(spread, {v[0], channel, y, x}),
                       ReadFloat32(inputs[1], {channel, k_in_group, flipped_r, flipped_s})),
                   {rc, ry, rx});
  });
}

// By phases (stride > 1, no dilation): output row y, t = (y + pad) / stride, ph = (y + pad) % stride,
// sums input row t - j times kernel row ph + j * stride over the taps j (and so for columns). The
// input is padded by taps - 1 rows above (and as far as the last t below); a kernel row past R is a
// zero weight, read at a clamped row so every load stays inside the tensor.
te::Operation PhasedConv(const TransposeShape& s, const std::vector<te::Operation>& inputs,
                         std::vector<te::Operation>& computes) {
  const int64_t Cg = s.C / s.groups, TY = s.Taps(s.R), TX = s.Taps(s.S);
  const int64_t PH = s.PhasedExtent(s.OH(), s.pad, s.R), PW = s.PhasedExtent(s.OW(), s.pad, s.S);
  te::Operation padded = te::Compute("pad", {s.N, s.C, PH, PW}, {"n", "c", "y", "x"}, [&](const std::vector<Var>& v) {
    const Expr iy = Expr(v[2]) - (TY - 1), ix = Expr(v[3]) - (TX - 1);
    Expr inside = And(And(GE(iy, IntImm(0)), LT(iy, IntImm(s.H))), And(GE(ix, IntImm(0)), LT(ix, IntImm(s.W))));
    return Select(inside, ReadFloat32(inputs[0], {v[0], v[1], iy, ix}), FloatImm(0.0));
  });
  computes.push_back(padded);
  auto rc = te::ReduceAxis(Cg, "rc");
  auto ry = te::ReduceAxis(TY, "ry");
  auto rx = te::ReduceAxis(TX, "rx");
  return te::Compute("conv", {s.N, s.K, s.OH(), s.OW()}, {"n", "k", "p", "q"}, [&](const std::vector<Var>& v) {
    const auto [channel, k_in_group] = GroupChannels(s, v[1], rc.var);
    const Expr ty = Expr(v[2]) + s.pad, tx = Expr(v[3]) + s.pad;
    const Expr stride = IntImm(s.stride);
    Expr y = FloorDiv(ty, stride) - ry.var + (TY - 1), x = FloorDiv(tx, stride) - rx.var + (TX - 1);
    Expr r = FloorMod(ty, stride) + ry.var * s.stride, c = FloorMod(tx, stride) + rx.var * s.stride;
    Expr weight = ReadFloat32(inputs[1], {channel, k_in_group, Min(r, IntImm(s.R - 1)), Min(c, IntImm(s.S - 1))});
    if (s.R % s.stride != 0 || s.S % s.stride != 0) {
      weight = Select(And(LT(r, IntImm(s.R)), LT(c, IntImm(s.S))), weight, FloatImm(0.0));
    }
    return te::Sum(Mul(ReadFloat32(padded, {v[0], channel, y, x}), weight), {rc, ry, rx});
  });
}

class Conv2dTransposeOperator : public OperatorDef {
 public:
  std::string Name() const override { return "conv2d_transpose"; }
  std::string Summary() const override {
    return "transposed 2-D convolution (PyTorch's conv_transpose2d), NCHW data x CKRS weights -> NKPQ";
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
            {"pad", 0, "padding taken off each side of the output (both dimensions)"},
            {"output_padding", 0, "extra rows and columns at the bottom and right of the output"},
            {"dilation", 1, "dilation (both dimensions)"},
            {"groups", 1, "groups; C and K must be multiples"}};
  }

  Result<void> Validate(const ShapeParams& p) const override {
    for (const auto& [k, v] : p) {
      const bool may_be_zero = k == "pad" || k == "output_padding";
      if (may_be_zero ? v < 0 : v < 1) return MakeError(fmt::format("{}={} must be at least {}", k, v, may_be_zero ? 0 : 1));
    }
    const TransposeShape s = Unpack(p);
    if (s.C % s.groups != 0) return MakeError(fmt::format("C={} is not a multiple of groups={}", s.C, s.groups));
    if (s.K % s.groups != 0) return MakeError(fmt::format("K={} is not a multiple of groups={}", s.K, s.groups));
    if (s.output_padding >= std::max(s.stride, s.dilation)) {
      return MakeError(fmt::format("output_padding={} must be smaller than the stride or the dilation", s.output_padding));
    }
    if (s.OH() < 1 || s.OW() < 1) {
      return MakeError(fmt::format("pad={} leaves an empty {}x{} output", s.pad, s.OH(), s.OW()));
    }
    for (auto r : {CheckTensorSize("data", {s.N, s.C, s.OH() + s.dilation * (s.R - 1), s.OW() + s.dilation * (s.S - 1)}),
                   CheckTensorSize("weight", {s.C, s.K / s.groups, s.R, s.S}),
                   CheckTensorSize("conv", {s.N, s.K, s.OH(), s.OW()})}) {
      if (!r) return r;
    }
    return {};
  }

  Workload Build(const ShapeParams& p, const Epilogue& epilogue, DType dtype, Precision) const override {
    const TransposeShape s = Unpack(p);
    const int64_t Cg = s.C / s.groups, Kg = s.K / s.groups, OH = s.OH(), OW = s.OW();
    std::vector<te::Operation> inputs = {te::Placeholder("data", {s.N, s.C, s.H, s.W}, dtype),
                                         te::Placeholder("weight", {s.C, Kg, s.R, s.S}, dtype)};
    std::vector<te::Operation> computes;
    te::Operation conv = s.Phased() ? PhasedConv(s, inputs, computes) : SpreadConv(s, inputs, computes);
    AddEpilogue(conv, 1, epilogue, dtype, inputs, computes);

    Workload w = StagedWorkload(Name(), p, epilogue, "data NCHW, weight CKRS -> out NKPQ", inputs, computes);
    const double outputs = 1.0 * s.N * s.K * OH * OW;
    // The products that meet an input element (the spread input's zeros are not work).
    w.flops = 2.0 * s.N * s.C * s.H * s.W * Kg * s.R * s.S + EpilogueFlops(epilogue, outputs);
    w.min_bytes = TensorBytes(dtype, {1.0 * s.N * s.C * s.H * s.W, 1.0 * s.C * Kg * s.R * s.S, outputs}) +
                  EpilogueInputBytes(epilogue, dtype, 1.0 * s.K, outputs);
    w.reference = [s, Cg, Kg, OH, OW, epilogue](const std::vector<const float*>& in, float* out) {
      std::vector<double> acc(s.N * s.K * OH * OW, 0.0);
      for (int64_t n = 0; n < s.N; ++n) {
        for (int64_t c = 0; c < s.C; ++c) {
          const int64_t g = c / Cg;
          for (int64_t kk = 0; kk < Kg; ++kk) {
            double* o = acc.data() + (n * s.K + g * Kg + kk) * OH * OW;
            for (int64_t r = 0; r < s.R; ++r) {
              for (int64_t t = 0; t < s.S; ++t) {
                const double wv = in[1][((c * Kg + kk) * s.R + r) * s.S + t];
                for (int64_t iy = 0; iy < s.H; ++iy) {
                  const int64_t y = iy * s.stride - s.pad + r * s.dilation;
                  if (y < 0 || y >= OH) continue;
                  const float* row = in[0] + ((n * s.C + c) * s.H + iy) * s.W;
                  for (int64_t ix = 0; ix < s.W; ++ix) {
                    const int64_t x = ix * s.stride - s.pad + t * s.dilation;
                    if (x >= 0 && x < OW) o[y * OW + x] += wv * row[ix];
                  }
                }
              }
            }
          }
        }
      }
      for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<float>(acc[i]);
      ApplyEpilogueReference(epilogue, {s.N, s.K, OH, OW}, 1, in.data() + 2, out);
    };
    return w;
  }
};

}  // namespace

std::unique_ptr<OperatorDef> MakeConv2dTransposeOperator() { return std::make_unique<Conv2dTransposeOperator>(); }

}  // namespace autotune::tir
