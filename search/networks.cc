// The layer lists are written from the published architectures, for ImageNet 224x224 inputs (the
// convolutional networks) and sequence length 128 (BERT, LLaMA), at inference: batch norm is folded into the
// preceding convolution as a bias, so a convolution's epilogue is "bias,relu" where a ReLU (or
// MobileNet's ReLU6, tuned as ReLU: the clamp costs the same) follows it directly, and "bias"
// where nothing does (the last convolution of a residual block, whose ReLU comes after the add; a
// downsample shortcut; MobileNetV2's linear bottleneck projection). Pooling and the adds of the
// convolutional networks are left out; the transformers' softmax and normalization layers are row
// operators, their GELU, SiLU and residual adds fused epilogues.
//
//   resnet18     He et al. 2016, basic blocks [2,2,2,2] (torchvision layout): 7x7/2 stem, 16 3x3
//                convs, 3 1x1/2 downsample convs = 20 convs, then fc 512->1000.
//   resnet50     bottleneck blocks [3,4,6,3], stride on the 3x3 conv (torchvision "v1.5"): stem,
//                16 blocks x 3 convs, 4 downsample 1x1 convs = 53 convs, then fc 2048->1000.
//   mobilenet_v2 Sandler et al. 2018, Table 2: 3x3/2 stem to 32 channels, 17 inverted residual blocks
//                (expansion t, channels c, repeats n, stride s) = (1,16,1,1) (6,24,2,2) (6,32,3,2)
//                (6,64,4,2) (6,96,3,1) (6,160,3,2) (6,320,1,1); the t=1 block has no expansion conv;
//                then 1x1 320->1280: 1 + 2 + 16*3 + 1 = 52 convs, then fc 1280->1000.
//   bert_base    Devlin et al. 2019: 12 encoder layers, hidden 768, 12 heads of 64, FFN 3072, sequence
//                128. Per layer: the query, key and value projections (three gemm [batch*128, 768] x
//                [768, 768], "bias"), the scores Q K^T (batch_matmul B=batch*12, 128x64 by 64x128), their
//                softmax (rows of 128; the 1/8 scale folded into the query weights), the context P V
//                (B=batch*12, 128x128 by 128x64), the attention output projection with the residual
//                added ("bias,residual"), a layer_norm (rows of 768), the FFN up projection (768->3072,
//                "bias,gelu") and down projection (3072->768, "bias,residual"), a second layer_norm.
//                Embedding lookups, the pooler and a task head are not part of the encoder.
//   llama_block  one decoder block of LLaMA-7B (Touvron et al. 2023) on a prompt of 128 tokens: hidden
//                4096, 32 heads of 128, MLP 11008. rms_norm (rows of 4096) before attention and before
//                the MLP; query, key and value projections (gemm 4096->4096); scores and context
//                (batch_matmul B=batch*32, 128x128 by 128x128: one task, two occurrences); softmax
//                (rows of 128; no causal mask); the output projection with the residual added
//                ("residual"); the MLP's gate projection (4096->11008, "silu"), up projection (the same
//                gemm without epilogue) and down projection (11008->4096, "residual"). The rotary
//                embedding and the product of the gate and up projections are elementwise and left out.
//   dcgan        Radford et al. 2016, the 64x64 generator as PyTorch's DCGAN tutorial builds it: a
//                latent vector of 100 (a 1x1 image) through five 4x4 transposed convolutions, 100->512
//                (stride 1, no padding: 4x4), then stride 2 and padding 1 (doubling the side)
//                512->256->128->64, and 64->3 at 64x64; batch norm folded and ReLU fused ("bias,relu")
//                except on the last, whose tanh is left out (no bias either).
//
// The same layer occurring several times (same operator, shape and epilogue) is one task whose weight
// is the number of occurrences; its name is the first occurrence's, with " (xN)" appended.
#include "search/networks.h"

#include <fmt/format.h>
#include <map>

#include "tir/ops/operator.h"

namespace autotune::search {
namespace {

// Collects layers in order of first occurrence and merges repeats.
class LayerList {
 public:
  explicit LayerList(int batch) : batch_(batch) {}

  void Add(const std::string& name, const std::string& op, const std::string& shape, const std::string& epilogue,
           double count = 1) {
    const std::string key = op + "|" + shape + "|" + epilogue;
    if (auto it = index_.find(key); it != index_.end()) {
      tasks_[it->second].weight += count;
      return;
    }
    index_.emplace(key, tasks_.size());
    tasks_.push_back(TuneTaskSpec{op, shape, epilogue, count, name});
  }

  // A convolution on a square input of side `hw`; depthwise when `groups` == c == k.
  void Conv(const std::string& name, int c, int hw, int k, int kernel, int stride, int pad, const std::string& epilogue,
            int groups = 1) {
    std::string shape = fmt::format("N={},C={},H={},W={},K={},R={},S={},stride={},pad={}", batch_, c, hw, hw, k, kernel,
                                    kernel, stride, pad);
    if (groups != 1) shape += fmt::format(",groups={}", groups);
    Add(name, "conv2d", shape, epilogue);
  }

  // A transposed convolution (kernel 4, as DCGAN's) on a square input of side `hw`.
  void ConvTranspose(const std::string& name, int c, int hw, int k, int stride, int pad, const std::string& epilogue) {
    Add(name, "conv2d_transpose",
        fmt::format("N={},C={},H={},W={},K={},R=4,S=4,stride={},pad={}", batch_, c, hw, hw, k, stride, pad), epilogue);
  }

  void Gemm(const std::string& name, int64_t m, int64_t n, int64_t k, const std::string& epilogue, double count = 1) {
    Add(name, "gemm", fmt::format("M={},N={},K={}", m, n, k), epilogue, count);
  }

  void BatchMatmul(const std::string& name, int64_t b, int64_t m, int64_t n, int64_t k, double count = 1) {
    Add(name, "batch_matmul", fmt::format("B={},M={},N={},K={}", b, m, n, k), "", count);
  }

  // softmax, layer_norm or rms_norm over rows of n.
  void Rows(const std::string& name, const std::string& op, int64_t m, int64_t n, double count = 1) {
    Add(name, op, fmt::format("M={},N={}", m, n), "", count);
  }

  std::vector<TuneTaskSpec> Finish() && {
    for (auto& t : tasks_) {
      if (t.weight > 1) t.name += fmt::format(" (x{})", t.weight);
    }
    return std::move(tasks_);
  }

  int batch() const { return batch_; }

 private:
  int batch_;
  std::vector<TuneTaskSpec> tasks_;
  std::map<std::string, size_t> index_;
};

// Output side of a convolution with kernel k, stride s and padding p on a square input of side hw.
int OutSide(int hw, int kernel, int stride, int pad) { return (hw + 2 * pad - kernel) / stride + 1; }

// conv1 7x7/2 (224 -> 112) and the 3x3/2 max pool (112 -> 56) of both ResNets.
int ResNetStem(LayerList& net) {
  net.Conv("conv1", 3, 224, 64, 7, 2, 3, "bias,relu");
  return OutSide(OutSide(224, 7, 2, 3), 3, 2, 1);
}

std::vector<TuneTaskSpec> ResNet18(int batch) {
  LayerList net(batch);
  int hw = ResNetStem(net);
  int in = 64;
  const int widths[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    const int out = widths[stage];
    for (int block = 0; block < 2; ++block) {
      const std::string prefix = fmt::format("layer{}.{}", stage + 1, block);
      const int stride = stage > 0 && block == 0 ? 2 : 1;
      const int ohw = OutSide(hw, 3, stride, 1);
      net.Conv(prefix + ".conv1", in, hw, out, 3, stride, 1, "bias,relu");
      net.Conv(prefix + ".conv2", out, ohw, out, 3, 1, 1, "bias");  // then + shortcut, then ReLU
      if (stride != 1 || in != out) net.Conv(prefix + ".downsample.0", in, hw, out, 1, stride, 0, "bias");
      in = out;
      hw = ohw;
    }
  }
  net.Gemm("fc", batch, 1000, 512, "bias");
  return std::move(net).Finish();
}

std::vector<TuneTaskSpec> ResNet50(int batch) {
  LayerList net(batch);
  int hw = ResNetStem(net);
  int in = 64;
  const int widths[] = {64, 128, 256, 512};
  const int blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const int width = widths[stage], out = 4 * width;
    for (int block = 0; block < blocks[stage]; ++block) {
      const std::string prefix = fmt::format("layer{}.{}", stage + 1, block);
      const int stride = stage > 0 && block == 0 ? 2 : 1;
      const int ohw = OutSide(hw, 3, stride, 1);
      net.Conv(prefix + ".conv1", in, hw, width, 1, 1, 0, "bias,relu");
      net.Conv(prefix + ".conv2", width, hw, width, 3, stride, 1, "bias,relu");
      net.Conv(prefix + ".conv3", width, ohw, out, 1, 1, 0, "bias");  // then + shortcut, then ReLU
      if (stride != 1 || in != out) net.Conv(prefix + ".downsample.0", in, hw, out, 1, stride, 0, "bias");
      in = out;
      hw = ohw;
    }
  }
  net.Gemm("fc", batch, 1000, 2048, "bias");
  return std::move(net).Finish();
}

std::vector<TuneTaskSpec> MobileNetV2(int batch) {
  LayerList net(batch);
  net.Conv("stem", 3, 224, 32, 3, 2, 1, "bias,relu");
  int hw = OutSide(224, 3, 2, 1);  // 112
  int in = 32;
  struct Stage {
    int t, c, n, s;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int index = 1;  // blocks are features.1 .. features.17 in torchvision
  for (const Stage& st : stages) {
    for (int i = 0; i < st.n; ++i, ++index) {
      const std::string prefix = fmt::format("block{}", index);
      const int stride = i == 0 ? st.s : 1;
      const int hidden = in * st.t;
      const int ohw = OutSide(hw, 3, stride, 1);
      if (st.t != 1) net.Conv(prefix + ".expand 1x1", in, hw, hidden, 1, 1, 0, "bias,relu");
      net.Conv(prefix + ".depthwise 3x3", hidden, hw, hidden, 3, stride, 1, "bias,relu", hidden);
      net.Conv(prefix + ".project 1x1", hidden, ohw, st.c, 1, 1, 0, "bias");  // linear bottleneck
      in = st.c;
      hw = ohw;
    }
  }
  net.Conv("head 1x1", in, hw, 1280, 1, 1, 0, "bias,relu");
  net.Gemm("classifier", batch, 1000, 1280, "bias");
  return std::move(net).Finish();
}

std::vector<TuneTaskSpec> BertBase(int batch) {
  constexpr int kLayers = 12, kSeq = 128, kHidden = 768, kHeads = 12, kHeadDim = 64, kFfn = 3072;
  LayerList net(batch);
  const int64_t tokens = int64_t{batch} * kSeq;
  const int64_t heads = int64_t{batch} * kHeads;
  net.Gemm("attention query/key/value projection", tokens, kHidden, kHidden, "bias", 3.0 * kLayers);
  net.BatchMatmul("attention scores Q K^T", heads, kSeq, kSeq, kHeadDim, kLayers);
  net.Rows("attention softmax", "softmax", heads * kSeq, kSeq, kLayers);
  net.BatchMatmul("attention context P V", heads, kSeq, kHeadDim, kSeq, kLayers);
  net.Gemm("attention output projection + residual", tokens, kHidden, kHidden, "bias,residual", kLayers);
  net.Rows("layer norms (attention, ffn)", "layer_norm", tokens, kHidden, 2.0 * kLayers);
  net.Gemm("ffn up projection + GELU", tokens, kFfn, kHidden, "bias,gelu", kLayers);
  net.Gemm("ffn down projection + residual", tokens, kHidden, kFfn, "bias,residual", kLayers);
  return std::move(net).Finish();
}

std::vector<TuneTaskSpec> LlamaBlock(int batch) {
  constexpr int kSeq = 128, kHidden = 4096, kHeads = 32, kHeadDim = 128, kMlp = 11008;
  LayerList net(batch);
  const int64_t tokens = int64_t{batch} * kSeq;
  const int64_t heads = int64_t{batch} * kHeads;
  net.Rows("rms norms (attention, mlp)", "rms_norm", tokens, kHidden, 2);
  net.Gemm("attention query/key/value projection", tokens, kHidden, kHidden, "", 3);
  net.BatchMatmul("attention scores Q K^T and context P V", heads, kSeq, kSeq, kHeadDim, 2);
  net.Rows("attention softmax", "softmax", heads * kSeq, kSeq);
  net.Gemm("attention output projection + residual", tokens, kHidden, kHidden, "residual");
  net.Gemm("mlp gate projection + SiLU", tokens, kMlp, kHidden, "silu");
  net.Gemm("mlp up projection", tokens, kMlp, kHidden, "");
  net.Gemm("mlp down projection + residual", tokens, kHidden, kMlp, "residual");
  return std::move(net).Finish();
}

std::vector<TuneTaskSpec> DcganGenerator(int batch) {
  LayerList net(batch);
  net.ConvTranspose("project 100->512 (4x4)", 100, 1, 512, 1, 0, "bias,relu");
  int side = 4;
  const int channels[] = {512, 256, 128, 64};
  for (int i = 0; i + 1 < 4; ++i, side *= 2) {
    net.ConvTranspose(fmt::format("up {}->{} ({}x{})", channels[i], channels[i + 1], 2 * side, 2 * side), channels[i],
                      side, channels[i + 1], 2, 1, "bias,relu");
  }
  net.ConvTranspose("to RGB 64->3 (64x64, then tanh)", 64, side, 3, 2, 1, "");
  return std::move(net).Finish();
}

}  // namespace

std::vector<std::string> NetworkNames() {
  return {"resnet18", "resnet50", "mobilenet_v2", "bert_base", "llama_block", "dcgan"};
}

Result<std::vector<TuneTaskSpec>> NetworkTasks(const std::string& network, int batch) {
  std::string names;
  for (const auto& n : NetworkNames()) names += (names.empty() ? "" : ", ") + n;
  if (batch < 1) return MakeError(fmt::format("batch must be at least 1, not {}", batch));
  std::vector<TuneTaskSpec> tasks;
  if (network == "resnet18") {
    tasks = ResNet18(batch);
  } else if (network == "resnet50") {
    tasks = ResNet50(batch);
  } else if (network == "mobilenet_v2") {
    tasks = MobileNetV2(batch);
  } else if (network == "bert_base") {
    tasks = BertBase(batch);
  } else if (network == "llama_block") {
    tasks = LlamaBlock(batch);
  } else if (network == "dcgan") {
    tasks = DcganGenerator(batch);
  } else {
    return MakeError(fmt::format("unknown network '{}' (known: {})", network, names));
  }
  // The layers are right by construction; what can fail is a batch so large that a tensor exceeds
  // what the operators accept (2^31 elements).
  for (const auto& t : tasks) {
    if (auto w = WorkloadOf(t); !w) {
      return MakeError(fmt::format("{} at batch {}: layer {}: {}", network, batch, t.name, w.error().message));
    }
  }
  return tasks;
}

}  // namespace autotune::search
