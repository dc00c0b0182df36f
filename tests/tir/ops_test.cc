// Operators: shape parsing, validation, FLOPs and bytes, canonical text and the references.
#include <gtest/gtest.h>

#include <cmath>

#include "tir/ops/operator.h"
#include "tir/te/compute_dag.h"

namespace autotune::tir {
namespace {

TEST(Operators, RegistryListsTheBuiltins) {
  std::vector<std::string> names;
  for (const auto* op : BuiltinOperators().All()) names.push_back(op->Name());
  EXPECT_EQ(names, (std::vector<std::string>{"gemm", "batch_matmul", "conv2d", "conv2d_nhwc", "conv1d", "conv3d", "conv2d_transpose", "capsule_conv2d",
                                               "norm", "softmax", "layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm"}));
}

TEST(Operators, ParsesShapesWithDefaults) {
  auto w = MakeWorkload("conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1");
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w->CanonicalText(), "conv2d[N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,dilation=1,groups=1]");
  EXPECT_EQ(w->output.shape, (std::vector<int64_t>{1, 64, 56, 56}));
  EXPECT_DOUBLE_EQ(w->flops, 2.0 * 64 * 56 * 56 * 64 * 9);
  EXPECT_DOUBLE_EQ(w->min_bytes, 4.0 * (64 * 56 * 56 + 64 * 64 * 9 + 64 * 56 * 56));
  auto g = MakeWorkload("gemm", " M = 4, N=5 ,K=6", "bias,relu");
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->CanonicalText(), "gemm[M=4,N=5,K=6]+bias,relu");
  EXPECT_EQ(g->inputs.size(), 3u);
  EXPECT_EQ(g->inputs[2].name, "bias");
  EXPECT_EQ(g->inputs[2].shape, (std::vector<int64_t>{5}));
}

// A 16-bit workload: tensors of the type, one more stage that rounds into it, its own key (float32
// keys are what they were), half the bytes.
TEST(Operators, SixteenBitElementTypes) {
  auto f32 = MakeWorkload("gemm", "M=4,N=5,K=6", "bias");
  auto f16 = MakeWorkload("gemm", "M=4,N=5,K=6", "bias", "float16");
  auto bf16 = MakeWorkload("gemm", "M=4,N=5,K=6", "", "bfloat16");
  ASSERT_TRUE(f32 && f16 && bf16);
  EXPECT_EQ(f32->KeyText(), "gemm[M=4,N=5,K=6]+bias;float32;A[M,K] B[K,N] -> C[M,N]");
  EXPECT_EQ(f16->CanonicalText(), "gemm[M=4,N=5,K=6]+bias:float16");
  EXPECT_EQ(f16->KeyText(), "gemm[M=4,N=5,K=6]+bias:float16;float16;A[M,K] B[K,N] -> C[M,N]");
  EXPECT_NE(f16->Key(), f32->Key());
  for (const auto& in : f16->inputs) EXPECT_EQ(in.dtype, DType::kFloat16) << in.name;  // bias too
  EXPECT_EQ(f16->output.dtype, DType::kFloat16);
  EXPECT_EQ(f16->output.name, "C_bias_float16");
  EXPECT_DOUBLE_EQ(f16->min_bytes, f32->min_bytes / 2);
  EXPECT_EQ(bf16->output.name, "C_bfloat16");  // no epilogue: the rounding stage alone
  EXPECT_EQ(bf16->dag->ops.size(), MakeWorkload("gemm", "M=4,N=5,K=6")->dag->ops.size() + 1);
  auto bad = MakeWorkload("gemm", "M=4,N=5,K=6", "", "float8");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "unknown element type 'float8' (expected float32, float16, bfloat16, tf32 or 3xtf32)");
}

// A precision other than ieee is part of a float32 product's workload: its own key and name, the
// precision's arithmetic in the compute definition, a reference of TF32-rounded inputs for tf32.
TEST(Operators, PrecisionOfFloat32Products) {
  auto ieee = MakeWorkload("gemm", "M=4,N=5,K=6");
  auto tf32 = MakeWorkload("gemm", "M=4,N=5,K=6", "", "tf32");
  auto split = MakeWorkload("batch_matmul", "B=2,M=4,N=5,K=6", "relu", "3xtf32");
  ASSERT_TRUE(ieee && tf32 && split);
  EXPECT_EQ(tf32->CanonicalText(), "gemm[M=4,N=5,K=6]:tf32");
  EXPECT_EQ(tf32->KeyText(), "gemm[M=4,N=5,K=6]:tf32;float32;A[M,K] B[K,N] -> C[M,N]");
  EXPECT_EQ(split->TypeName(), "3xtf32");
  EXPECT_EQ(split->precision, Precision::kSplitTF32);
  EXPECT_NE(tf32->Key(), ieee->Key());
  EXPECT_EQ(tf32->output.dtype, DType::kFloat32);
  EXPECT_EQ(tf32->dag->ops.size(), ieee->dag->ops.size());
  // Inputs 1 + 2^-11 (a tie, rounds to 1 + 2^-10 in TF32): the tf32 reference multiplies the rounded values.
  const std::vector<float> a(4 * 6, 1 + std::ldexp(1.0f, -11)), b(6 * 5, 1.0f);
  std::vector<float> out_ieee(20), out_tf32(20);
  ieee->reference({a.data(), b.data()}, out_ieee.data());
  tf32->reference({a.data(), b.data()}, out_tf32.data());
  EXPECT_FLOAT_EQ(out_ieee[0], 6 * (1 + std::ldexp(1.0f, -11)));
  EXPECT_FLOAT_EQ(out_tf32[0], 6 * (1 + std::ldexp(1.0f, -10)));
  // A convolution's reference rounds its data and weights alike (a 1x1 window over 6 channels).
  auto conv = MakeWorkload("conv2d", "N=1,C=6,H=1,W=1,K=1,R=1,S=1", "", "tf32");
  ASSERT_TRUE(conv) << conv.error().message;
  EXPECT_EQ(conv->TypeName(), "tf32");
  conv->reference({a.data(), b.data()}, out_tf32.data());
  EXPECT_FLOAT_EQ(out_tf32[0], 6 * (1 + std::ldexp(1.0f, -10)));
  auto t2d = MakeWorkload("conv2d_transpose", "N=1,C=4,H=4,W=4,K=4,R=3,S=3", "", "tf32");
  ASSERT_FALSE(t2d);
  EXPECT_EQ(t2d.error().message,
            "conv2d_transpose products are computed in float32 only (tf32 and 3xtf32 are for gemm, batch_matmul and conv1d/2d/3d)");
  auto half = CombineNumberType("float16", "tf32");
  ASSERT_FALSE(half);
  EXPECT_EQ(half.error().message, "--precision tf32 is for float32 products, not float16");
  EXPECT_EQ(CombineNumberType("float32", "3xtf32")->Name(), "3xtf32");
  EXPECT_EQ(CombineNumberType("bfloat16", "ieee")->Name(), "bfloat16");
  EXPECT_EQ(CombineNumberType("float32", "fp32").error().message, "unknown precision 'fp32' (expected ieee, tf32 or 3xtf32)");
}

TEST(Operators, RejectsBadInputWithAClearMessage) {
  struct Case {
    std::string op, shape, epilogue, expect;
  };
  std::vector<Case> cases = {
      {"gemv", "M=1", "", "unknown operator 'gemv'"},
      {"gemm", "M=1,N=2", "", "missing parameter K"},
      {"gemm", "M=1,N=2,K=3,Q=4", "", "unknown shape parameter 'Q'"},
      {"gemm", "M=1,N=2,K=x", "", "is not an integer"},
      {"gemm", "M=1,N=2,K=3,M=4", "", "given twice"},
      {"gemm", "M=0,N=2,K=3", "", "M=0 must be at least 1"},
      {"gemm", "M=1;N=2,K=3", "", "M='1;N=2' is not an integer"},
      {"gemm", "M=1,,K=3", "", "malformed shape item"},
      {"gemm", "M=1,N=2,K=3,", "", "trailing comma in shape 'M=1,N=2,K=3,'"},
      {"gemm", "M=1,N=2,K=3, ", "", "trailing comma in shape"},
      {"gemm", "", "", "empty shape"},
      {"gemm", "M=1,N=2,K=3", "tanh", "unknown epilogue 'tanh'"},
      {"gemm", "M=100000,N=100000,K=3", "", "at most 2^31-1"},
      {"conv2d", "N=1,C=6,H=8,W=8,K=4,R=3,S=3,groups=4", "", "C=6 is not a multiple of groups=4"},
      {"conv2d", "N=1,C=4,H=2,W=2,K=4,R=5,S=5", "", "larger than the padded"},
      {"conv2d", "N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=-1", "", "pad=-1 must be at least 0"},
      // Found by shape_fuzz: H + 2 * pad overflowed in the validator itself.
      {"conv2d", "N=1,C=32,H=118,W=112,K=32,R=2,S=3,pad=8000000000000000003,groups=32", "",
       "pad=8000000000000000003 is too large (at most 2147483647)"},
      {"gemm", "M=2147483648,N=1,K=1", "", "M=2147483648 is too large"},
  };
  for (const auto& c : cases) {
    auto w = MakeWorkload(c.op, c.shape, c.epilogue);
    ASSERT_FALSE(w) << c.op << " " << c.shape;
    EXPECT_NE(w.error().message.find(c.expect), std::string::npos) << w.error().message;
  }
}

TEST(Operators, StridedDilatedGroupedConvolutionShapes) {
  auto w = MakeWorkload("conv2d", "N=2,C=8,H=9,W=7,K=4,R=3,S=2,stride=2,pad=1,dilation=2,groups=2");
  ASSERT_TRUE(w) << w.error().message;
  // OH = (9 + 2 - 2*2 - 1)/2 + 1 = 4, OW = (7 + 2 - 2*1 - 1)/2 + 1 = 4
  EXPECT_EQ(w->output.shape, (std::vector<int64_t>{2, 4, 4, 4}));
  EXPECT_EQ(w->inputs[1].shape, (std::vector<int64_t>{4, 4, 3, 2}));
  // Padding is a stage of its own so schedules can inline it.
  EXPECT_EQ(w->dag->ops.size(), 4u);  // data, weight, pad, conv
}

// A tiny convolution checked against values worked out by hand.
TEST(Operators, ConvolutionReferenceMatchesHandComputation) {
  auto w = MakeWorkload("conv2d", "N=1,C=1,H=3,W=3,K=1,R=2,S=2,pad=1", "bias,relu");
  ASSERT_TRUE(w);
  std::vector<float> data = {1, 2, 3, 4, 5, 6, 7, 8, 9}, weight = {1, -1, 2, 0}, bias = {-3};
  std::vector<float> out(16);
  w->reference({data.data(), weight.data(), bias.data()}, out.data());
  // out[y][x] = sum_{r,s} pad[y+r][x+s] * w[r][s], pad = data padded by 1, then relu(. - 3).
  auto padded = [&](int y, int x) -> float {
    return (y < 1 || y > 3 || x < 1 || x > 3) ? 0.f : data[(y - 1) * 3 + (x - 1)];
  };
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) {
      float v = padded(y, x) * 1 + padded(y, x + 1) * -1 + padded(y + 1, x) * 2 + padded(y + 1, x + 1) * 0;
      EXPECT_FLOAT_EQ(out[y * 4 + x], std::max(v - 3.f, 0.f)) << y << "," << x;
    }
  }
}

// Epilogue parts apply in the order given, each input after the operator's own, in part order.
TEST(Operators, EpilogueChainsApplyInOrder) {
  auto w = MakeWorkload("gemm", "M=1,N=2,K=1", "scale,shift,residual,relu6");
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w->epilogue, "scale,shift,residual,relu6");
  ASSERT_EQ(w->inputs.size(), 5u);
  EXPECT_EQ(w->inputs[2].name, "scale");
  EXPECT_EQ(w->inputs[3].name, "shift");
  EXPECT_EQ(w->inputs[4].name, "residual");
  EXPECT_EQ(w->inputs[4].shape, (std::vector<int64_t>{1, 2}));
  EXPECT_DOUBLE_EQ(w->flops, 2.0 * 2 + 3 * 2);  // one add or multiply per input-taking part and output
  std::vector<float> a = {2}, b = {1, -3}, scale = {4, 0.5}, shift = {-1, 1}, residual = {0.5, -10}, out(2);
  w->reference({a.data(), b.data(), scale.data(), shift.data(), residual.data()}, out.data());
  // (2 * 4 - 1 + 0.5) clamps to 6; (-6 * 0.5 + 1 - 10) to 0.
  EXPECT_EQ(out, (std::vector<float>{6, 0}));

  auto reordered = MakeWorkload("gemm", "M=1,N=2,K=1", "relu,bias");
  ASSERT_TRUE(reordered) << reordered.error().message;
  std::vector<float> bias = {-1, -1};
  reordered->reference({a.data(), b.data(), bias.data()}, out.data());
  EXPECT_EQ(out, (std::vector<float>{1, -1}));  // relu first, then the bias
  EXPECT_NE(reordered->CanonicalText(), MakeWorkload("gemm", "M=1,N=2,K=1", "bias,relu")->CanonicalText());
}

TEST(Operators, EpilogueActivationsReference) {
  const double x = 0.75;
  const std::vector<std::pair<std::string, double>> cases = {
      {"gelu", 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)))},
      {"gelu_tanh", 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)))},
      {"silu", x / (1 + std::exp(-x))},
      {"relu6", x}};
  for (const auto& [epilogue, expect] : cases) {
    auto w = MakeWorkload("gemm", "M=1,N=1,K=1", epilogue);
    ASSERT_TRUE(w) << w.error().message;
    std::vector<float> a = {1.5}, b = {0.5}, out(1);
    w->reference({a.data(), b.data()}, out.data());
    EXPECT_FLOAT_EQ(out[0], static_cast<float>(expect)) << epilogue;
  }
  EXPECT_FALSE(ParseEpilogue("bias,"));
  EXPECT_EQ(ParseEpilogue("bias+relu")->Text(), "bias,relu");
  EXPECT_EQ(ParseEpilogue("none")->Text(), "");
}

// conv2d_nhwc is conv2d with the channels last in data (NHWC), weights (KRSC) and output (NPQK): the
// same answers on transposed data, its epilogue's channels last too.
TEST(Operators, Conv2dNhwcIsConv2dWithTheChannelsLast) {
  const std::string shape = "N=2,C=4,H=5,W=6,K=6,R=3,S=2,stride=2,pad=1,groups=2";
  auto first = MakeWorkload("conv2d", shape, "bias"), last = MakeWorkload("conv2d_nhwc", shape, "bias");
  ASSERT_TRUE(first && last);
  EXPECT_EQ(last->inputs[0].shape, (std::vector<int64_t>{2, 5, 6, 4}));
  EXPECT_EQ(last->inputs[1].shape, (std::vector<int64_t>{6, 3, 2, 2}));
  EXPECT_EQ(last->output.shape, (std::vector<int64_t>{2, 3, 4, 6}));
  EXPECT_EQ(first->flops, last->flops);
  const int64_t N = 2, C = 4, H = 5, W = 6, K = 6, Cg = 2, R = 3, S = 2, P = 3, Q = 4;
  std::vector<float> data(N * C * H * W), weight(K * Cg * R * S), bias(K), data_last(data.size()), weight_last(weight.size());
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 7) % 13) - 6;
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = static_cast<float>((i * 5) % 7) - 3;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t x = 0; x < H * W; ++x) data_last[(n * H * W + x) * C + c] = data[(n * C + c) * H * W + x];
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t x = 0; x < R * S; ++x) weight_last[(k * R * S + x) * Cg + c] = weight[(k * Cg + c) * R * S + x];
  std::vector<float> out_first(N * K * P * Q), out_last(out_first.size());
  first->reference({data.data(), weight.data(), bias.data()}, out_first.data());
  last->reference({data_last.data(), weight_last.data(), bias.data()}, out_last.data());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t x = 0; x < P * Q; ++x) {
        ASSERT_EQ(out_last[(n * P * Q + x) * K + k], out_first[(n * K + k) * P * Q + x]) << n << " " << k << " " << x;
      }
  auto bad = MakeWorkload("conv2d_nhwc", "N=1,C=6,H=8,W=8,K=4,R=3,S=3,groups=4");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("C=6 is not a multiple of groups=4"), std::string::npos) << bad.error().message;
}

// conv1d and conv3d are conv2d with the extra dimensions gone or of extent 1: same answers on the
// same data; and conv1d's stride, padding, dilation and groups by hand.
TEST(Operators, ConvolutionsOfEveryRankAgree) {
  auto c1 = MakeWorkload("conv1d", "N=2,C=4,L=11,K=6,R=3,pad=1,dilation=2,groups=2", "bias");
  auto c2 = MakeWorkload("conv2d", "N=2,C=4,H=1,W=11,K=6,R=1,S=3,pad=1,dilation=2,groups=2", "bias");
  auto c3 = MakeWorkload("conv3d", "N=2,C=4,D=1,H=1,W=11,K=6,Q=1,R=1,S=3,pad=1,dilation=2,groups=2", "bias");
  ASSERT_TRUE(c1 && c2 && c3);
  EXPECT_EQ(c1->output.shape, (std::vector<int64_t>{2, 6, 9}));
  EXPECT_EQ(c1->inputs[1].shape, (std::vector<int64_t>{6, 2, 3}));
  EXPECT_EQ(c3->output.shape, (std::vector<int64_t>{2, 6, 3, 3, 9}));  // padding applies to D and H too
  EXPECT_EQ(c3->inputs[1].shape, (std::vector<int64_t>{6, 2, 1, 1, 3}));
  EXPECT_DOUBLE_EQ(c1->flops, 2.0 * 2 * 6 * 9 * 2 * 3 + 2 * 6 * 9);
  std::vector<float> data(2 * 4 * 11), weight(6 * 2 * 3), bias(6);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 7) % 13) - 6;
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = static_cast<float>((i * 5) % 7) - 3;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i);
  std::vector<float> o1(2 * 6 * 9), o2(2 * 6 * 3 * 9), o3(2 * 6 * 3 * 3 * 9);
  c1->reference({data.data(), weight.data(), bias.data()}, o1.data());
  c2->reference({data.data(), weight.data(), bias.data()}, o2.data());
  c3->reference({data.data(), weight.data(), bias.data()}, o3.data());
  // conv2d's middle output row (y = 1) and conv3d's middle plane and row see the unpadded input.
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t k = 0; k < 6; ++k) {
      for (int64_t x = 0; x < 9; ++x) {
        const float v = o1[(n * 6 + k) * 9 + x];
        EXPECT_EQ(o2[((n * 6 + k) * 3 + 1) * 9 + x], v);
        EXPECT_EQ(o3[(((n * 6 + k) * 3 + 1) * 3 + 1) * 9 + x], v);
        EXPECT_EQ(o2[((n * 6 + k) * 3 + 0) * 9 + x], bias[k]);  // a row of padding only
      }
    }
  }
  // By hand, with stride 2: n=0, k=4 (group 1: channels 2, 3), x=2 reads 2*2-1+{0,2,4} = 3, 5, 7.
  auto strided = MakeWorkload("conv1d", "N=2,C=4,L=11,K=6,R=3,stride=2,pad=1,dilation=2,groups=2", "bias");
  ASSERT_TRUE(strided);
  EXPECT_EQ(strided->output.shape, (std::vector<int64_t>{2, 6, 5}));
  std::vector<float> os(2 * 6 * 5);
  strided->reference({data.data(), weight.data(), bias.data()}, os.data());
  double expect = bias[4];
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t r = 0; r < 3; ++r) expect += data[(2 + c) * 11 + 3 + 2 * r] * weight[(4 * 2 + c) * 3 + r];
  }
  EXPECT_EQ(os[4 * 5 + 2], static_cast<float>(expect));
  auto bad = MakeWorkload("conv3d", "N=1,C=2,D=2,H=8,W=8,K=2,Q=3,R=3,S=3");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("the 3x3x3 kernel is larger than the padded 2x8x8 input"), std::string::npos)
      << bad.error().message;
}

// The transposed convolution is conv2d's adjoint: <conv2d(x, w), y> = <x, conv2d_transpose(y, w)>
// when the transpose maps conv2d's output shape back to its input shape.
TEST(Operators, TransposedConvolutionIsTheAdjointOfConv2d) {
  struct Case {
    std::string conv, transpose;
  };
  const std::vector<Case> cases = {
      {"N=2,C=4,H=7,W=6,K=6,R=3,S=2,stride=2,pad=1,dilation=1,groups=2",
       "N=2,C=6,H=4,W=4,K=4,R=3,S=2,stride=2,pad=1,output_padding=0,dilation=1,groups=2"},
      {"N=1,C=3,H=8,W=8,K=2,R=3,S=3,stride=3,pad=2,dilation=2",
       "N=1,C=2,H=3,W=3,K=3,R=3,S=3,stride=3,pad=2,output_padding=1,dilation=2"},
      {"N=1,C=2,H=5,W=5,K=3,R=4,S=4,pad=3", "N=1,C=3,H=8,W=8,K=2,R=4,S=4,pad=3"},
  };
  for (const auto& c : cases) {
    auto conv = MakeWorkload("conv2d", c.conv);
    auto tr = MakeWorkload("conv2d_transpose", c.transpose);
    ASSERT_TRUE(conv) << conv.error().message;
    ASSERT_TRUE(tr) << tr.error().message;
    ASSERT_EQ(tr->output.shape, conv->inputs[0].shape) << c.transpose;
    ASSERT_EQ(tr->inputs[0].shape, conv->output.shape) << c.transpose;
    ASSERT_EQ(tr->inputs[1].shape, conv->inputs[1].shape) << c.transpose;
    auto fill = [](std::vector<float>& v, int seed) {
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i * 7 + seed) % 11) - 5);
    };
    std::vector<float> x(tr->output.NumElements()), y(conv->output.NumElements()), w(conv->inputs[1].NumElements());
    fill(x, 1);
    fill(y, 3);
    fill(w, 2);
    std::vector<float> cx(y.size()), ty(x.size());
    conv->reference({x.data(), w.data()}, cx.data());
    tr->reference({y.data(), w.data()}, ty.data());
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < y.size(); ++i) lhs += static_cast<double>(cx[i]) * y[i];
    for (size_t i = 0; i < x.size(); ++i) rhs += static_cast<double>(x[i]) * ty[i];
    EXPECT_EQ(lhs, rhs) << c.transpose;  // small integers: exact
    EXPECT_NE(lhs, 0) << c.transpose;
  }
  auto t2d = MakeWorkload("conv2d_transpose", "N=1,C=512,H=4,W=4,K=256,R=4,S=4,stride=2,pad=1");  // Ansor's T2D
  ASSERT_TRUE(t2d);
  EXPECT_EQ(t2d->output.shape, (std::vector<int64_t>{1, 256, 8, 8}));
  EXPECT_DOUBLE_EQ(t2d->flops, 2.0 * 512 * 16 * 256 * 16);
  auto bad = MakeWorkload("conv2d_transpose", "N=1,C=2,H=4,W=4,K=2,R=3,S=3,stride=2,output_padding=2");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("output_padding=2 must be smaller"), std::string::npos);
}

// Row operators: their tensors, FLOPs and bytes, no epilogue, and references with the properties
// that define them.
TEST(Operators, RowOperatorReferences) {
  auto bad = MakeWorkload("softmax", "M=2,N=3", "relu");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "operator softmax takes no epilogue");
  auto run = [](const Workload& w, const std::vector<std::vector<float>>& in) {
    std::vector<const float*> ptrs;
    for (const auto& v : in) ptrs.push_back(v.data());
    int64_t n = 1;
    for (int64_t d : w.output.shape) n *= d;
    std::vector<float> out(n);
    w.reference(ptrs, out.data());
    return out;
  };
  const std::vector<float> x = {1, 2, 3, 1000, -5, 0.5f, 7, 7};  // two rows of 4; a large value
  auto sm = MakeWorkload("softmax", "M=2,N=4");
  ASSERT_TRUE(sm) << sm.error().message;
  EXPECT_EQ(sm->layout, "X[M,N] -> Y[M,N]");
  EXPECT_DOUBLE_EQ(sm->flops, 5.0 * 8);
  EXPECT_DOUBLE_EQ(sm->min_bytes, 4.0 * 16);
  auto y = run(*sm, {x});
  EXPECT_FLOAT_EQ(y[3], 1.0f);  // exp(1000) would overflow without the max
  EXPECT_NEAR(y[4] + y[5] + y[6] + y[7], 1.0, 1e-6);
  EXPECT_FLOAT_EQ(y[6], y[7]);
  auto ln = MakeWorkload("layer_norm", "M=2,N=4");
  ASSERT_TRUE(ln);
  ASSERT_EQ(ln->inputs.size(), 3u);
  EXPECT_EQ(ln->inputs[1].shape, (std::vector<int64_t>{4}));
  y = run(*ln, {x, {1, 1, 1, 1}, {0, 0, 0, 0}});
  double mean = 0, sq = 0;
  for (int j = 4; j < 8; ++j) mean += y[j] / 4.0;
  for (int j = 4; j < 8; ++j) sq += y[j] * y[j] / 4.0;
  EXPECT_NEAR(mean, 0.0, 1e-6);
  EXPECT_NEAR(sq, 1.0, 1e-4);  // the variance, less what epsilon takes
  y = run(*ln, {x, {2, 2, 2, 2}, {1, 1, 1, 1}});
  EXPECT_NEAR(y[4] + y[5] + y[6] + y[7], 4.0, 1e-5);
  auto rms = MakeWorkload("rms_norm", "M=1,N=2");
  ASSERT_TRUE(rms);
  y = run(*rms, {{3, 4}, {1, 2}});
  const double r = std::sqrt((9.0 + 16.0) / 2 + 1e-5);
  EXPECT_NEAR(y[0], 3 / r, 1e-6);
  EXPECT_NEAR(y[1], 2 * 4 / r, 1e-6);
  auto norm = MakeWorkload("norm", "B=2,M=1,N=2");
  ASSERT_TRUE(norm);
  EXPECT_EQ(norm->output.shape, (std::vector<int64_t>{2}));
  EXPECT_DOUBLE_EQ(norm->min_bytes, 4.0 * (4 + 2));
  y = run(*norm, {{3, 4, 0, -2}});
  EXPECT_FLOAT_EQ(y[0], 5.0f);
  EXPECT_FLOAT_EQ(y[1], 2.0f);
}

// The fused residual: X + R is written out (rounded to the type) and normalized; the kernel takes
// X, R, W, then sum and Y, and the reference writes sum, then Y.
TEST(Operators, AddRmsNormWritesTheSumToo) {
  auto w = MakeWorkload("add_rms_norm", "M=1,N=2");
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w->layout, "X[M,N] R[M,N] W[N] -> sum[M,N] Y[M,N]");
  ASSERT_EQ(w->side_outputs.size(), 1u);
  EXPECT_EQ(w->side_outputs[0].name, "sum");
  EXPECT_EQ(w->Outputs().back().name, "Y");
  EXPECT_EQ(w->NumTensors(), 5u);
  EXPECT_EQ(w->OutputElements(), 4);
  EXPECT_DOUBLE_EQ(w->min_bytes, 4.0 * (2 + 2 + 2 + 2 + 2));  // X, R, W read; sum, Y written
  EXPECT_DOUBLE_EQ(w->flops, 5.0 * 2);
  std::vector<float> x = {1, 3}, r = {2, 1}, wt = {1, 2}, out(4);
  w->reference({x.data(), r.data(), wt.data()}, out.data());
  const double rms = std::sqrt((9.0 + 16.0) / 2 + 1e-5);
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], 4.0f);
  EXPECT_NEAR(out[2], 3 / rms, 1e-6);
  EXPECT_NEAR(out[3], 2 * 4 / rms, 1e-6);
  // In float16 the sum is rounded before it is normalized: 1 + 2^-11 is 1 there.
  auto h = MakeWorkload("add_rms_norm", "M=1,N=1", "", "float16");
  ASSERT_TRUE(h);
  std::vector<float> hx = {1}, hr = {std::ldexp(1.0f, -11)}, hw = {1}, hout(2);
  h->reference({hx.data(), hr.data(), hw.data()}, hout.data());
  EXPECT_EQ(hout[0], 1.0f);
  EXPECT_NEAR(hout[1], 1 / std::sqrt(1 + 1e-5), 1e-7);
  auto ln = MakeWorkload("add_layer_norm", "M=3,N=8");
  ASSERT_TRUE(ln);
  EXPECT_EQ(ln->inputs.size(), 4u);  // X, R, gamma, beta
  EXPECT_EQ(ln->Outputs().size(), 2u);
}

TEST(Operators, BatchMatmulReference) {
  auto w = MakeWorkload("batch_matmul", "B=2,M=2,N=1,K=2");
  ASSERT_TRUE(w);
  std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8}, b = {1, 1, 2, -1}, out(4);
  w->reference({a.data(), b.data()}, out.data());
  EXPECT_EQ(out, (std::vector<float>{3, 7, 4, 6}));
}

}  // namespace
}  // namespace autotune::tir
