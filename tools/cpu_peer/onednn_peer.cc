// oneDNN as the peer of conv1d, conv2d, conv3d and conv2d_nhwc: its forward-inference convolution on
// the saved NC[D]H[W] data and K C/groups R S weights (NHWC and KRSC for conv2d_nhwc, described to
// oneDNN as those layouts of the same tensors), the epilogue as its bias and post-ops. Weights are
// reordered into the primitive's layout once, outside the timing (a framework does it when it loads
// the model); data and output stay in the plain layout the caller holds, so a variant that computes
// in oneDNN's blocked layouts has its two reorders timed with it.
#include "tools/cpu_peer/peer_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "tir/ops/epilogue.h"

#ifdef AUTOTUNE_PEER_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace autotune::cpu_peer {

#ifdef AUTOTUNE_PEER_ONEDNN
namespace {

using dnnl::algorithm;
using dnnl::memory;
using Tag = memory::format_tag;

// The row-major tag of a tensor of `rank` dimensions.
Tag PlainTag(size_t rank) {
  static const Tag tags[] = {Tag::a, Tag::ab, Tag::abc, Tag::abcd, Tag::abcde, Tag::abcdef};
  return tags[rank - 1];
}

memory::desc PlainDesc(const memory::dims& dims) { return {dims, memory::data_type::f32, PlainTag(dims.size())}; }
memory::desc AnyDesc(const memory::dims& dims) { return {dims, memory::data_type::f32, Tag::any}; }

memory::dims Dims(const std::vector<int64_t>& v) { return memory::dims(v.begin(), v.end()); }

// The tag of a tensor whose dimension `ch` (logical order) is stored last: NHWC is acdb.
Tag ChannelsLastTag(size_t rank, size_t ch) {
  static const std::pair<std::pair<size_t, size_t>, Tag> tags[] = {
      {{3, 1}, Tag::acb}, {{4, 1}, Tag::acdb}, {{5, 1}, Tag::acdeb}, {{5, 2}, Tag::abdec}, {{6, 2}, Tag::abdefc}};
  for (const auto& [key, tag] : tags) {
    if (key == std::make_pair(rank, ch)) return tag;
  }
  throw dnnl::error(dnnl_unimplemented, "no channels-last tag of this rank");
}

// Saved dims with the channels last, in oneDNN's logical order (channels second).
memory::dims ChannelsSecond(memory::dims d) {
  std::rotate(d.begin() + 1, d.end() - 1, d.end());
  return d;
}

// What the convolution needs from the saved workload, in oneDNN's terms.
struct ConvSpec {
  memory::dims src, weights, bias, dst, strides, dilates, padding;  // logical order (channels second)
  bool channels_last = false;  // the caller's tensors are stored channels last
  bool bias_first = false;  // the epilogue starts with bias: the convolution's own bias input
  dnnl::post_ops post_ops;
  std::vector<std::pair<int, memory>> post_op_args;  // binary post-ops' second inputs

  // How the caller's data, output (and residual) and weights are laid out.
  memory::desc User(const memory::dims& d) const {
    return {d, memory::data_type::f32, channels_last ? ChannelsLastTag(d.size(), 1) : PlainTag(d.size())};
  }
  memory::desc UserWeights() const {
    const size_t ch = weights.size() - src.size() + 1;  // grouped weights have a leading group dimension
    const Tag tag = channels_last ? ChannelsLastTag(weights.size(), ch) : PlainTag(weights.size());
    return {weights, memory::data_type::f32, tag};
  }
};

algorithm Eltwise(tir::EpiloguePart p, float* alpha, float* beta) {
  using tir::EpiloguePart;
  *alpha = 0, *beta = 0;
  switch (p) {
    case EpiloguePart::kRelu: return algorithm::eltwise_relu;
    case EpiloguePart::kRelu6: *beta = 6; return algorithm::eltwise_clip;
    case EpiloguePart::kGelu: return algorithm::eltwise_gelu_erf;
    case EpiloguePart::kGeluTanh: return algorithm::eltwise_gelu_tanh;
    default: *alpha = 1; return algorithm::eltwise_swish;  // silu
  }
}

// The epilogue after the convolution's bias as post-ops: per-channel inputs and the residual as
// binary ones (their data are the saved inputs), activations as eltwise ones.
void AddPostOps(const SavedWorkload& w, const dnnl::engine& engine, ConvSpec* spec) {
  using tir::EpiloguePart;
  memory::dims channel(spec->dst.size(), 1);
  channel[1] = spec->dst[1];
  size_t input = 2;  // data and weights come first
  for (size_t i = 0; i < w.epilogue.parts.size(); ++i) {
    const EpiloguePart p = w.epilogue.parts[i];
    if (i == 0 && spec->bias_first) {
      ++input;
      continue;
    }
    if (tir::TakesInput(p)) {
      const memory::desc md = p == EpiloguePart::kResidual ? spec->User(spec->dst) : PlainDesc(channel);
      spec->post_ops.append_binary(p == EpiloguePart::kScale ? algorithm::binary_mul : algorithm::binary_add, md);
      void* data = const_cast<float*>(w.inputs.at(input++).data.data());
      const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(spec->post_ops.len() - 1) | DNNL_ARG_SRC_1;
      spec->post_op_args.emplace_back(arg, memory(md, engine, data));
    } else {
      float alpha, beta;
      const algorithm a = Eltwise(p, &alpha, &beta);
      spec->post_ops.append_eltwise(1.0f, a, alpha, beta);
    }
  }
}

ConvSpec MakeConvSpec(const SavedWorkload& w, const dnnl::engine& engine) {
  ConvSpec s;
  s.channels_last = w.manifest.at("op") == "conv2d_nhwc";
  s.src = Dims(w.inputs.at(0).shape);
  s.weights = Dims(w.inputs.at(1).shape);
  s.dst = Dims(w.out_shape);
  if (s.channels_last) {
    s.src = ChannelsSecond(s.src);
    s.weights = ChannelsSecond(s.weights);
    s.dst = ChannelsSecond(s.dst);
  }
  const int64_t groups = std::max<int64_t>(w.Param("groups"), 1);
  if (groups > 1) {  // oneDNN's grouped weights: G x K/G x C/G x kernel (the same bytes as K x C/G x kernel)
    s.weights[0] /= groups;
    s.weights.insert(s.weights.begin(), groups);
  }
  const size_t spatial = s.src.size() - 2;
  s.strides.assign(spatial, std::max<int64_t>(w.Param("stride"), 1));
  s.dilates.assign(spatial, std::max<int64_t>(w.Param("dilation"), 1) - 1);  // oneDNN counts the gaps
  s.padding.assign(spatial, w.Param("pad"));
  s.bias_first = !w.epilogue.parts.empty() && w.epilogue.parts[0] == tir::EpiloguePart::kBias;
  if (s.bias_first) s.bias = {s.dst[1]};
  AddPostOps(w, engine, &s);
  return s;
}

// One way to run the convolution: its primitive on src/dst descriptors that are plain or `any`.
class ConvVariant {
 public:
  ConvVariant(const SavedWorkload& w, const ConvSpec& s, const dnnl::engine& engine, bool plain_io, algorithm alg,
              float* out)
      : spec_(s), engine_(engine), stream_(engine) {
    auto io = [&](const memory::dims& d) { return plain_io ? s.User(d) : AnyDesc(d); };
    const memory::desc bias_md = s.bias_first ? PlainDesc(s.bias) : memory::desc();
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, alg, io(s.src), AnyDesc(s.weights),
                                         bias_md, io(s.dst), s.strides, s.dilates, s.padding, s.padding);
    dnnl::primitive_attr attr;
    attr.set_post_ops(s.post_ops);
    pd_ = dnnl::convolution_forward::primitive_desc(desc, attr, engine);
    conv_ = dnnl::convolution_forward(pd_);
    user_src_ = memory(s.User(s.src), engine, const_cast<float*>(w.inputs[0].data.data()));
    user_dst_ = memory(s.User(s.dst), engine, out);
    src_ = pd_.src_desc() == user_src_.get_desc() ? user_src_ : memory(pd_.src_desc(), engine);
    dst_ = pd_.dst_desc() == user_dst_.get_desc() ? user_dst_ : memory(pd_.dst_desc(), engine);
    memory user_weights(s.UserWeights(), engine, const_cast<float*>(w.inputs[1].data.data()));
    weights_ = memory(pd_.weights_desc(), engine);
    dnnl::reorder(user_weights, weights_).execute(stream_, user_weights, weights_);
    if (s.bias_first) bias_ = memory(bias_md, engine, const_cast<float*>(w.inputs[2].data.data()));
    stream_.wait();
  }

  void operator()() {
    if (src_ != user_src_) dnnl::reorder(user_src_, src_).execute(stream_, user_src_, src_);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst_}};
    if (spec_.bias_first) args[DNNL_ARG_BIAS] = bias_;
    for (const auto& [arg, m] : spec_.post_op_args) args[arg] = m;
    conv_.execute(stream_, args);
    if (dst_ != user_dst_) dnnl::reorder(dst_, user_dst_).execute(stream_, dst_, user_dst_);
    stream_.wait();
  }

 private:
  ConvSpec spec_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward conv_;
  memory user_src_, user_dst_, src_, dst_, weights_, bias_;
};

std::string OneDnnVersion() {
  const dnnl_version_t* v = dnnl_version();
  return fmt::format("oneDNN {}.{}.{} ({})", v->major, v->minor, v->patch, v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "threads");
}

}  // namespace

Result<PeerKernel> MakeOneDnnKernel(const SavedWorkload& w, float* out) {
  const std::string op = w.manifest.at("op");
  if (op != "conv1d" && op != "conv2d" && op != "conv3d" && op != "conv2d_nhwc") {
    return MakeError("oneDNN is the peer of conv1d, conv2d, conv3d and conv2d_nhwc, not " + op);
  }
  try {
    const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    const ConvSpec spec = MakeConvSpec(w, engine);
    PeerKernel k{OneDnnVersion(), {}};
    struct Way { const char* name; bool plain; algorithm alg; };
    for (const Way& way : {Way{"direct, plain layouts", true, algorithm::convolution_direct},
                           Way{"direct, blocked layouts + reorders", false, algorithm::convolution_direct},
                           Way{"auto, blocked layouts + reorders", false, algorithm::convolution_auto}}) {
      try {
        auto v = std::make_shared<ConvVariant>(w, spec, engine, way.plain, way.alg, out);
        k.variants.push_back({way.name, [v] { (*v)(); }});
      } catch (const dnnl::error&) {
        // oneDNN has no implementation of this way for the shape: the other ways stand.
      }
    }
    if (k.variants.empty()) return MakeError("oneDNN has no convolution for this workload");
    return k;
  } catch (const dnnl::error& e) {
    return MakeError(std::string("oneDNN: ") + e.what());
  }
}
#else
Result<PeerKernel> MakeOneDnnKernel(const SavedWorkload&, float*) {
  return MakeError("this autotune-cpu-peer was built without oneDNN (Debian's libdnnl-dev)");
}
#endif

}  // namespace autotune::cpu_peer
