// Every operator, with and without epilogues, at ordinary and odd shapes, strided, padded, dilated
// and grouped: the default schedules and many random schedules of the tiling templates give correct
// results through the C path. GPU-style schedules (thread bindings, shared memory, barriers,
// virtual threads) run through the same path with their thread loops serialized, so CI checks GPU
// lowering without a GPU.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "measure/c_builder.h"
#include "measure/cpu_runner.h"
#include "measure/nvrtc_builder.h"
#include "measure/nvrtc_compiler.h"
#include "search/default_schedule.h"
#include "search/sketch.h"
#include "tir/printer.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/schedule/naive_gpu_schedule.h"
#include "tests/search/correctness_config.h"

namespace autotune::search {
namespace {

using tir::TargetKind;

struct Shape {
  std::string shape, epilogue;
  std::string dtype = "float32";
};


struct Counts {
  int checked = 0, compiled = 0;
};

// Builds the lowered functions `inputs` (named `names`) with the C path and runs them against the
// reference of `w`: every one must give the right answer. The CUDA ones among them (`cuda`) are also
// compiled with NVRTC for sm_90 where it is installed.
Counts CheckLowered(const tir::Workload& w, const std::vector<measure::BuildInput>& inputs,
                    const std::vector<std::string>& names, const std::vector<measure::BuildInput>& cuda,
                    const std::vector<std::string>& cuda_names) {
  Counts n;
  auto builder = measure::MakeCBuilder(CorrectnessConfig());
  auto runner = measure::MakeCpuRunner(CorrectnessConfig());
  auto builds = builder->Build(inputs);
  auto results = runner->Run(w, builds);
  EXPECT_EQ(results.size(), inputs.size());
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_TRUE(results[i].correct) << names[i] << "\n"
                                    << measure::ErrorKindName(results[i].error_kind) << ": "
                                    << results[i].error_message << "\n"
                                    << builds[i].source;
    ++n.checked;
  }
  if (!measure::LoadNvrtc()) return n;
  measure::MeasureConfig cuda_config = CorrectnessConfig();
  cuda_config.cuda_arch = "sm_90";
  auto cubins = measure::MakeNvrtcBuilder(cuda_config)->Build(cuda);
  for (size_t i = 0; i < cubins.size(); ++i) {
    // Too many threads or too much shared memory for the GPU is a fair verdict on a random
    // schedule; a schedule that passes the check but does not compile is a bug.
    if (cubins[i].error_kind == measure::ErrorKind::kInvalidSchedule) continue;
    EXPECT_TRUE(cubins[i].ok()) << cuda_names[i] << "\n" << measure::ErrorKindName(cubins[i].error_kind) << ": "
                                << cubins[i].error_message << "\n" << cubins[i].source;
    n.compiled += cubins[i].ok();
  }
  return n;
}

// Builds and runs the default schedules and `randoms` random schedules per target, spread over the
// shapes; every one must lower and give the right answer. The CUDA schedules are also compiled with
// NVRTC for sm_90 (no GPU needed): every one the GPU validity check accepts must compile.
// `cuda_sketch` (optional) restricts the random CUDA schedules to one sketch.
void CheckOperator(const std::string& op, const std::vector<Shape>& shapes, int randoms,
                   const std::string& cuda_sketch = "") {
  const bool have_nvrtc = bool(measure::LoadNvrtc());
  int checked = 0, compiled = 0;
  for (size_t si = 0; si < shapes.size(); ++si) {
    auto w = tir::MakeWorkload(op, shapes[si].shape, shapes[si].epilogue, shapes[si].dtype);
    ASSERT_TRUE(w) << w.error().message;
    std::vector<measure::BuildInput> inputs, cuda_inputs;
    std::vector<std::string> names, cuda_names;
    for (TargetKind target : {TargetKind::kCpu, TargetKind::kCuda}) {
      const int per_shape = (randoms + static_cast<int>(shapes.size()) - 1) / static_cast<int>(shapes.size());
      // The default, then random schedules until per_shape were sampled (a sketch may reject a sample).
      for (int k = -1, sampled = 0; sampled < per_shape && k < 10 * per_shape; ++k) {
        const uint64_t seed = 1000 * si + k + 1;
        const SketchSpec* sketch = target == TargetKind::kCuda ? FindSketch(cuda_sketch) : nullptr;
        auto sch = k < 0     ? DefaultSchedule(*w, target)
                   : sketch ? RandomScheduleOfSketch(*w, *sketch, seed)
                            : RandomSchedule(*w, target, seed);
        const std::string name = fmt::format("{} {} {}", w->CanonicalText(), tir::TargetKindName(target),
                                             k < 0 ? std::string("default") : fmt::format("seed {}", seed));
        if (k >= 0 && !sch) continue;
        ASSERT_TRUE(sch) << name << ": " << sch.error().message;
        sampled += k >= 0;
        auto f = tir::Lower(sch->state());
        ASSERT_TRUE(f) << name << ": " << f.error().message << "\n" << sch->trace().ToText();
        inputs.push_back(measure::BuildInput::FromFunc(*f));
        names.push_back(name + "\n" + sch->trace().ToText());
        if (target == TargetKind::kCuda) {
          cuda_inputs.push_back(measure::BuildInput::FromFunc(*f));
          cuda_names.push_back(names.back());
        }
      }
    }
    // The naive GPU schedule computes the reference of CUDA candidates: it must be right too.
    auto naive = tir::NaiveGpuSchedule(*w);
    ASSERT_TRUE(naive) << naive.error().message;
    auto nf = tir::Lower(naive->state());
    ASSERT_TRUE(nf) << nf.error().message;
    inputs.push_back(measure::BuildInput::FromFunc(*nf));
    names.push_back(w->CanonicalText() + " naive gpu schedule\n" + naive->trace().ToText());
    const Counts n = CheckLowered(*w, inputs, names, cuda_inputs, cuda_names);
    checked += n.checked;
    compiled += n.compiled;
  }
  EXPECT_GE(checked, 2 * randoms);
  if (have_nvrtc) {
    EXPECT_GE(compiled, std::min(21, randoms / 2 + 1)) << "the defaults and many sampled CUDA schedules must compile";
  }
}

// A reduction loop bound to threads: each thread's share is combined through shared memory. Thread
// counts that are and are not powers of two, a predicated split, rows of threads (threadIdx.y).
TEST(ScheduleCorrectness, CrossThreadReduction) {
  auto w = tir::MakeWorkload("gemm", "M=5,N=3,K=300", "", "float32");
  ASSERT_TRUE(w) << w.error().message;
  std::vector<measure::BuildInput> inputs;
  std::vector<std::string> names;
  for (int64_t threads : {32, 48, 7, 8, 64, 96}) {  // warp shuffles for 8, 32, 64 and 96
    tir::Schedule s(*w, TargetKind::kCuda);
    auto C = s.GetStage("C");
    ASSERT_TRUE(C);
    auto l = s.GetLoops(*C).value();
    ASSERT_TRUE(s.Bind(l[0], tir::ThreadTag::kBlockIdxX));
    ASSERT_TRUE(s.Bind(l[1], tir::ThreadTag::kThreadIdxY));
    auto k = s.Split(l[2], {std::monostate{}, threads}).value();
    ASSERT_TRUE(s.Unroll(k[0]));
    ASSERT_TRUE(s.Bind(k[1], tir::ThreadTag::kThreadIdxX));
    auto f = tir::Lower(s.state());
    ASSERT_TRUE(f) << f.error().message;
    inputs.push_back(measure::BuildInput::FromFunc(*f));
    names.push_back(fmt::format("{} threads\n{}", threads, s.trace().ToText()));
  }
  const Counts n = CheckLowered(*w, inputs, names, inputs, names);
  EXPECT_EQ(n.checked, 6);
}

TEST(ScheduleCorrectness, Gemm) {
  CheckOperator("gemm",
                {{"M=64,N=48,K=32", ""},
                 {"M=127,N=33,K=17", ""},
                 {"M=40,N=64,K=24", "bias,relu"},
                 {"M=1,N=96,K=50", "relu"},
                 {"M=31,N=7,K=64", "bias"}},
                30);
}

// Every epilogue part, alone and chained, with its per-channel or output-shaped inputs.
TEST(ScheduleCorrectness, EpilogueChains) {
  CheckOperator("gemm",
                {{"M=40,N=24,K=16", "scale,shift,residual,relu"},
                 {"M=17,N=33,K=8", "bias,gelu"},
                 {"M=16,N=16,K=16", "gelu_tanh"},
                 {"M=9,N=20,K=12", "relu6,bias", "float16"}},
                8);
  CheckOperator("batch_matmul", {{"B=2,M=16,N=12,K=8", "residual,silu"}}, 3);
  CheckOperator("conv2d",
                {{"N=1,C=8,H=9,W=9,K=8,R=3,S=3,pad=1", "scale,shift,relu6"},
                 {"N=1,C=6,H=8,W=8,K=6,R=3,S=3,pad=1,groups=6", "bias,silu", "bfloat16"},
                 {"N=2,C=4,H=6,W=6,K=4,R=1,S=1", "residual,gelu"}},
                6);
}

TEST(ScheduleCorrectness, Conv1dAndConv3d) {
  CheckOperator("conv1d",
                {{"N=2,C=8,L=33,K=12,R=3,pad=1", "bias,relu"},
                 {"N=1,C=6,L=20,K=6,R=5,stride=2,pad=2,groups=6", ""},
                 {"N=1,C=16,L=15,K=8,R=3,dilation=2", "", "float16"},
                 {"N=1,C=1,L=13,K=7,R=2,stride=3", "relu6"}},  // primes, ones, stride > kernel
                8);
  CheckOperator("conv3d",
                {{"N=1,C=4,D=5,H=6,W=6,K=8,Q=3,R=3,S=3,pad=1", "relu"},
                 {"N=1,C=3,D=8,H=9,W=9,K=4,Q=3,R=3,S=3,stride=2,pad=1", "bias"},
                 {"N=1,C=8,D=3,H=4,W=4,K=8,Q=1,R=1,S=1,groups=2", "", "bfloat16"},
                 {"N=1,C=1,D=1,H=7,W=5,K=3,Q=1,R=2,S=2,stride=3", "bias"}},
                8);
}

// Channels last: every sketch (cpu and cuda, FMA) on NHWC data and KRSC weights, odd shapes included.
TEST(ScheduleCorrectness, Conv2dNhwc) {
  CheckOperator("conv2d_nhwc",
                {{"N=1,C=8,H=9,W=9,K=16,R=3,S=3,pad=1", "bias,relu"},
                 {"N=2,C=6,H=7,W=11,K=6,R=3,S=3,stride=2,pad=1,groups=6", "scale,shift,residual"},
                 {"N=1,C=5,H=13,W=7,K=3,R=2,S=2,stride=3,dilation=2", "", "float16"},  // primes, stride > kernel
                 {"N=1,C=32,H=4,W=4,K=8,R=1,S=1", "gelu"}},
                8);
}

TEST(ScheduleCorrectness, Conv2dTranspose) {
  CheckOperator("conv2d_transpose",
                {{"N=1,C=16,H=4,W=4,K=8,R=4,S=4,stride=2,pad=1", "bias,relu"},
                 {"N=2,C=6,H=5,W=7,K=4,R=3,S=3,stride=3,pad=2,output_padding=1,dilation=2,groups=2", ""},
                 {"N=1,C=8,H=6,W=6,K=8,R=3,S=3,pad=1", "", "float16"},
                 {"N=1,C=3,H=5,W=7,K=1,R=2,S=2,stride=3", "bias,gelu"},  // gaps of bias only in the output
                 {"N=2,C=5,H=5,W=6,K=3,R=3,S=5,stride=2,pad=2,output_padding=1", ""}},  // phases past the kernel
                8);
}

// Row operators (cuda.rows, cpu.rows): reductions across a block's threads, several rows a block,
// rows shorter than a warp, 16-bit types.
TEST(ScheduleCorrectness, RowOperators) {
  CheckOperator("softmax", {{"M=7,N=100", ""}, {"M=3,N=33", "", "float16"}, {"M=4,N=1", ""}}, 9);
  CheckOperator("layer_norm", {{"M=5,N=64", ""}, {"M=3,N=70", "", "bfloat16"}}, 6);
  CheckOperator("rms_norm", {{"M=4,N=300", ""}, {"M=33,N=8", ""}, {"M=3,N=4100", ""}}, 9);
  CheckOperator("norm", {{"B=3,M=7,N=9", ""}, {"B=1,M=40,N=33", ""}, {"B=2,M=65,N=70", ""}}, 9);
  // Long rows split over blocks (cuda.rows_split), parts that do not divide the axis; a million
  // positive terms, which one float32 accumulator (the naive GPU schedule before it split them) sums
  // 4e-4 off.
  CheckOperator("norm", {{"B=1,M=100,N=50", ""}, {"B=2,M=33,N=130", "", "float16"}, {"B=1,M=1024,N=1024", ""}}, 6,
                "cuda.rows_split");
  CheckOperator("rms_norm", {{"M=2,N=4097", ""}}, 3, "cuda.rows_split");
}

// The fused residual: the sum is a second output, written at the row by the threads that read it.
TEST(ScheduleCorrectness, RowOperatorsWithAResidualSum) {
  CheckOperator("add_rms_norm", {{"M=4,N=300", ""}, {"M=33,N=8", "", "float16"}, {"M=1,N=1", ""}, {"M=3,N=4100", ""}}, 9);
  CheckOperator("add_layer_norm", {{"M=5,N=64", ""}, {"M=3,N=70", "", "bfloat16"}, {"M=7,N=1", ""}}, 6);
}

TEST(ScheduleCorrectness, CapsuleConv2d) {
  CheckOperator("capsule_conv2d",
                {{"N=1,C=4,H=6,W=6,K=4,R=3,S=3,stride=2,pad=1", "bias,relu"},
                 {"N=2,C=3,H=5,W=4,K=2,R=2,S=3,capsule=3", ""},
                 {"N=1,C=2,H=4,W=4,K=4,R=3,S=3,pad=1,capsule=2", "", "float16"}},
                8);
}

TEST(ScheduleCorrectness, BatchMatmul) {
  CheckOperator("batch_matmul",
                {{"B=3,M=17,N=24,K=9", ""},
                 {"B=2,M=32,N=16,K=20", "bias,relu"},
                 {"B=5,M=8,N=13,K=7", "relu"}},
                30);
}

TEST(ScheduleCorrectness, Conv2d) {
  CheckOperator("conv2d",
                {{"N=1,C=8,H=10,W=10,K=8,R=3,S=3,pad=1", ""},
                 {"N=2,C=4,H=11,W=9,K=6,R=3,S=3,stride=2,pad=1", "bias,relu"},
                 {"N=1,C=3,H=12,W=12,K=4,R=3,S=3,pad=2,dilation=2", "relu"},
                 {"N=1,C=8,H=7,W=7,K=8,R=3,S=3,pad=1,groups=4", "bias"},
                 {"N=1,C=6,H=9,W=9,K=6,R=3,S=3,pad=1,groups=6", "bias,relu"},
                 {"N=1,C=16,H=5,W=5,K=8,R=1,S=1", ""}},
                30);
}

// cpu.matrix (1x1 convolutions tiled as gemms: weights x input pixels as contiguous columns), its
// default and random schedules: epilogues, odd sizes, a padded input, conv1d and conv3d.
TEST(ScheduleCorrectness, PointwiseConvolutionsAsGemmsOnTheCpu) {
  CheckOperator("conv2d",
                {{"N=1,C=24,H=9,W=7,K=10,R=1,S=1", "bias,relu"}, {"N=1,C=5,H=6,W=6,K=7,R=1,S=1,pad=1", ""},
                 {"N=1,C=16,H=8,W=8,K=16,R=1,S=1", "scale,shift,residual,relu", "bfloat16"}},
                9, "cuda.tensor_core");
  CheckOperator("conv1d", {{"N=1,C=12,L=37,K=9,R=1", "gelu"}}, 3);
  CheckOperator("conv3d", {{"N=1,C=6,D=3,H=5,W=4,K=8,Q=1,R=1,S=1", "", "float16"}}, 3);
}

// float16 and bfloat16 tensors (float32 accumulation, one rounding into the output) through every
// schedule structure: the C path checks them at the type's tolerance, NVRTC compiles the CUDA ones.
TEST(ScheduleCorrectness, SixteenBitTypes) {
  CheckOperator("gemm", {{"M=64,N=48,K=32", "bias,relu", "float16"}, {"M=33,N=17,K=40", "", "bfloat16"}}, 8);
  CheckOperator("batch_matmul", {{"B=2,M=16,N=24,K=9", "relu", "bfloat16"}, {"B=3,M=8,N=13,K=16", "", "float16"}}, 6);
  CheckOperator("conv2d",
                {{"N=1,C=8,H=10,W=10,K=8,R=3,S=3,pad=1", "bias", "float16"},
                 {"N=1,C=6,H=9,W=9,K=6,R=3,S=3,pad=1,groups=6", "relu", "bfloat16"},
                 {"N=1,C=16,H=5,W=5,K=8,R=1,S=1", "", "float16"}},
                9);
}

// The default schedules of every sketch with all shared copies double-buffered: the refill loops are
// pipelined (copies one iteration ahead into a second half; cp.async on CUDA) and still right.
TEST(ScheduleCorrectness, DoubleBufferedCopies) {
  const std::vector<std::pair<std::string, Shape>> cases = {
      {"gemm", {"M=64,N=48,K=32", "bias,relu"}},
      {"gemm", {"M=127,N=33,K=17", ""}},
      {"gemm", {"M=4,N=24,K=300", ""}},
      {"batch_matmul", {"B=3,M=17,N=24,K=40", "relu"}},
      {"conv2d", {"N=1,C=8,H=10,W=10,K=8,R=3,S=3,pad=1", "bias,relu"}},
      {"conv2d", {"N=2,C=4,H=11,W=9,K=6,R=3,S=3,stride=2,pad=1", ""}},
      {"conv2d", {"N=1,C=64,H=5,W=5,K=8,R=3,S=3,pad=1", ""}},
  };
  int pipelined = 0, checked = 0;
  for (const auto& [op, s] : cases) {
    auto w = tir::MakeWorkload(op, s.shape, s.epilogue);
    ASSERT_TRUE(w) << w.error().message;
    std::vector<measure::BuildInput> inputs;
    std::vector<std::string> names;
    const tir::Schedule fresh(*w, TargetKind::kCuda);
    for (const SketchSpec* sketch : ApplicableSketches(fresh)) {
      SketchDecisions d = DefaultDecisions(fresh, *sketch);
      d.double_buffer = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 1; };
      tir::Schedule sch(*w, TargetKind::kCuda);
      auto applied = ApplySketch(sch, *sketch, d);
      ASSERT_TRUE(applied) << sketch->name << ": " << applied.error().message;
      auto f = tir::Lower(sch.state());
      ASSERT_TRUE(f) << f.error().message;
      pipelined += tir::ToString(f->body).find("barrier(async_wait=0)") != std::string::npos;
      inputs.push_back(measure::BuildInput::FromFunc(*f));
      names.push_back(w->CanonicalText() + " " + sketch->name + "\n" + sch.trace().ToText());
    }
    checked += CheckLowered(*w, inputs, names, inputs, names).checked;
  }
  EXPECT_GE(checked, static_cast<int>(cases.size()));
  // Most default schedules refill their copies in the shape the pass pipelines.
  EXPECT_GE(pipelined, checked / 2) << pipelined << " of " << checked << " pipelined";
}

// Split-K (rfactor of the outer reduction, partial sums in a workspace, a second kernel summing them
// and applying the epilogue) on small outputs with long reductions, including reduction extents the
// part counts do not divide evenly further in.
TEST(ScheduleCorrectness, SplitKSketch) {
  CheckOperator("gemm", {{"M=4,N=24,K=300", "bias,relu"}, {"M=3,N=5,K=256", ""}}, 12, "cuda.split_k");
  CheckOperator("batch_matmul", {{"B=2,M=8,N=6,K=260", "relu"}}, 6, "cuda.split_k");
  CheckOperator("conv2d",
                {{"N=1,C=64,H=5,W=5,K=8,R=3,S=3,pad=1", "bias,relu"},
                 {"N=1,C=32,H=6,W=6,K=4,R=3,S=3,stride=2,pad=1", ""}},
                12, "cuda.split_k");
}

// The im2col sketch (the window read reindexed into an im2col matrix, copied to shared memory with the
// padding folded in): strides, dilation, no padding, batches, epilogues.
TEST(ScheduleCorrectness, Im2colSketch) {
  CheckOperator("conv2d",
                {{"N=1,C=8,H=10,W=10,K=8,R=3,S=3,pad=1", "bias,relu"},
                 {"N=2,C=4,H=11,W=9,K=6,R=3,S=3,stride=2,pad=1", ""},
                 {"N=1,C=3,H=12,W=12,K=4,R=3,S=3,pad=2,dilation=2", "relu"},
                 {"N=1,C=3,H=9,W=9,K=5,R=2,S=3", ""}},
                12, "cuda.im2col");
  // The same after split-K: the partial sums' stage reads the im2col matrix of its part of the channels.
  CheckOperator("conv2d",
                {{"N=1,C=64,H=5,W=5,K=8,R=3,S=3,pad=1", "bias,relu"},
                 {"N=2,C=32,H=6,W=6,K=4,R=3,S=3,stride=2,pad=1", ""}},
                12, "cuda.split_k_im2col");
}

// The direct sketch (no shared copies: each thread reads its window from global memory, the padding
// folded into the read): depthwise and grouped convolutions, strided, dilated, with epilogues, and a
// gemm of a short reduction.
TEST(ScheduleCorrectness, DirectSketch) {
  CheckOperator("conv2d",
                {{"N=1,C=6,H=9,W=9,K=6,R=3,S=3,pad=1,groups=6", "bias,relu"},
                 {"N=2,C=8,H=11,W=9,K=8,R=3,S=3,stride=2,pad=1,groups=8", ""},
                 {"N=1,C=4,H=12,W=12,K=4,R=3,S=3,pad=2,dilation=2,groups=4", "relu"},
                 {"N=1,C=8,H=7,W=7,K=8,R=5,S=5,pad=2,groups=4", "bias"}},
                16, "cuda.direct");
  CheckOperator("gemm", {{"M=33,N=40,K=12", "bias"}}, 4, "cuda.direct");
}

// The tensor-core sketch (mma.sync tiles, ldmatrix loads, fragments; the C path runs each
// intrinsic's description): 16-bit products with epilogues, batches, one warp or several, shapes
// that are not whole tiles (padded), sampled factors and double-buffered copies; NVRTC compiles the
// CUDA ones.
TEST(ScheduleCorrectness, TensorCoreSketch) {
  CheckOperator("gemm",
                {{"M=64,N=48,K=32", "bias,relu", "float16"}, {"M=128,N=64,K=64", "", "bfloat16"},
                 {"M=16,N=8,K=16", "gelu", "float16"}, {"M=33,N=17,K=40", "bias", "float16"}},
                12, "cuda.tensor_core");
  CheckOperator("batch_matmul",
                {{"B=2,M=32,N=16,K=48", "relu", "float16"}, {"B=3,M=64,N=32,K=32", "", "bfloat16"},
                 {"B=2,M=9,N=13,K=7", "", "bfloat16"}},
                9, "cuda.tensor_core");
  // Convolutions as implicit GEMMs: padded, strided and dilated windows, a batch, odd sizes.
  CheckOperator("conv2d",
                {{"N=2,C=8,H=10,W=10,K=16,R=3,S=3,pad=1", "bias,relu", "float16"},
                 {"N=1,C=5,H=11,W=9,K=24,R=3,S=3,stride=2,pad=1", "", "bfloat16"},
                 {"N=1,C=16,H=12,W=12,K=32,R=3,S=3,pad=2,dilation=2", "scale,shift,residual,relu", "float16"}},
                9, "cuda.tensor_core");
  CheckOperator("conv1d", {{"N=2,C=8,L=30,K=16,R=5,pad=2", "gelu", "bfloat16"}}, 3, "cuda.tensor_core");
  CheckOperator("conv2d_nhwc",
                {{"N=2,C=8,H=10,W=10,K=16,R=3,S=3,pad=1", "bias,relu", "float16"},
                 {"N=1,C=5,H=9,W=7,K=24,R=3,S=3,stride=2,pad=1", "residual", "bfloat16"}},
                6, "cuda.tensor_core");
  CheckOperator("conv3d", {{"N=1,C=4,D=5,H=6,W=6,K=16,Q=3,R=3,S=3,pad=1", "", "float16"}}, 3, "cuda.tensor_core");
}

// Split-K on tensor cores: the parts a batch axis of the tiled product, float32 partial sums in a
// workspace, the second kernel summing them through the epilogue; part counts that leave a part's
// reduction short of whole mma steps (padded), odd shapes, both 16-bit types and tf32.
TEST(ScheduleCorrectness, TensorCoreSplitKSketch) {
  CheckOperator("gemm", {{"M=16,N=24,K=512", "bias,relu", "float16"}, {"M=33,N=17,K=300", "", "bfloat16"}}, 8,
                "cuda.tensor_core_split_k");
  CheckOperator("batch_matmul", {{"B=2,M=32,N=16,K=256", "gelu", "float16"}}, 4, "cuda.tensor_core_split_k");
  CheckOperator("conv2d",
                {{"N=2,C=64,H=6,W=6,K=16,R=3,S=3,pad=1", "scale,shift,residual,relu", "float16"},
                 {"N=1,C=48,H=7,W=5,K=24,R=3,S=3,stride=2,pad=1", "", "bfloat16"}},
                8, "cuda.tensor_core_split_k");
  CheckOperator("conv2d_nhwc", {{"N=2,C=64,H=5,W=5,K=16,R=3,S=3,pad=1", "bias", "float16"}}, 4,
                "cuda.tensor_core_split_k");
  CheckOperator("gemm", {{"M=32,N=16,K=264", "relu", "tf32"}}, 4, "cuda.tensor_core_split_k");
}

// float32 products at TF32 and 3xTF32 precision on the tensor-core sketch (m16n8k8 tiles, the
// product's cache in registers where no epilogue follows it), and their default FMA schedules: the C
// path computes the precision's arithmetic exactly as the description states it.
TEST(ScheduleCorrectness, TF32TensorCoreSketch) {
  CheckOperator("gemm",
                {{"M=64,N=64,K=32", "", "tf32"}, {"M=48,N=40,K=24", "bias,relu", "3xtf32"},
                 {"M=33,N=17,K=13", "", "3xtf32"}, {"M=16,N=8,K=8", "gelu", "tf32"}},
                12, "cuda.tensor_core");
  CheckOperator("batch_matmul", {{"B=2,M=32,N=16,K=40", "", "tf32"}, {"B=3,M=9,N=13,K=7", "relu", "3xtf32"}}, 6,
                "cuda.tensor_core");
  CheckOperator("conv2d",
                {{"N=1,C=4,H=7,W=7,K=16,R=3,S=3,pad=1", "relu", "tf32"}, {"N=2,C=3,H=9,W=9,K=8,R=3,S=3,stride=2", "", "3xtf32"}},
                4, "cuda.tensor_core");
}

}  // namespace
}  // namespace autotune::search
