// On a GPU: the default CUDA schedules (one per offered sketch) and 50 sampled ones of every operator, built by NVRTC and run
// by the Driver API runner, give the answer of the naive reference kernel. Skips without a GPU.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>

#include "measure/cuda_driver.h"
#include "measure/cuda_runner.h"
#include "measure/nvrtc_builder.h"
#include "search/default_schedule.h"
#include "tir/analysis/gpu_validity.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"

namespace autotune::search {
namespace {

struct Case {
  std::string op, shape, epilogue, dtype = "float32";
};

measure::MeasureConfig GpuTestConfig() {
  measure::MeasureConfig c;
  c.warmup = 0;
  c.repeats = 1;
  c.min_repeat_ms = 0;  // correctness only
  c.flush_cache = false;
  c.run_timeout_s = 20;
  return c;
}

// The default schedule and `valid` sampled schedules per operator that pass the GPU validity check
// (samples it rejects, e.g. too many threads per block, are drawn again: they never reach a GPU),
// spread over the cases.
void CheckOnGpu(const std::vector<Case>& cases, int valid) {
  auto device = measure::QueryCudaDeviceIsolated(0);
  if (!device) GTEST_SKIP() << device.error().message;
  auto builder = measure::MakeNvrtcBuilder(GpuTestConfig());
  auto runner = measure::MakeCudaRunner(GpuTestConfig());
  int correct = 0, rejected = 0;
  const int per_case = (valid + static_cast<int>(cases.size()) - 1) / static_cast<int>(cases.size());
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    auto w = tir::MakeWorkload(cases[ci].op, cases[ci].shape, cases[ci].epilogue, cases[ci].dtype);
    ASSERT_TRUE(w) << w.error().message;
    std::vector<measure::BuildInput> inputs;
    std::vector<std::string> names;
    int sampled = 0;
    // The defaults of every offered sketch (k < 0), then samples (a sketch may reject one).
    const std::vector<tir::Schedule> defaults = DefaultSchedules(*w, tir::TargetKind::kCuda);
    ASSERT_FALSE(defaults.empty());
    for (int k = -static_cast<int>(defaults.size()); sampled < per_case && k < 100 * per_case; ++k) {
      const uint64_t seed = 7000 + 1000 * ci + k;
      Result<tir::Schedule> sch = k < 0 ? Result<tir::Schedule>(defaults[defaults.size() + k])
                                        : RandomSchedule(*w, tir::TargetKind::kCuda, seed);
      if (!sch) {
        ++rejected;
        continue;
      }
      auto f = tir::Lower(sch->state());
      ASSERT_TRUE(f) << f.error().message;
      if (auto ok = tir::CheckGpuValidity(*f); !ok) {
        EXPECT_GE(k, 0) << "the default schedule must be valid: " << ok.error().message;
        ++rejected;
        continue;
      }
      sampled += k >= 0;
      inputs.push_back(measure::BuildInput::FromFunc(*f));
      names.push_back(fmt::format("{} {}\n{}", w->CanonicalText(), k < 0 ? "default" : fmt::format("seed {}", seed),
                                  sch->trace().ToText()));
    }
    auto builds = builder->Build(inputs);
    auto results = runner->Run(*w, builds);
    for (size_t i = 0; i < results.size(); ++i) {
      EXPECT_TRUE(results[i].correct) << names[i] << measure::ErrorKindName(results[i].error_kind) << ": "
                                      << results[i].error_message;
      correct += results[i].correct;
    }
  }
  ::testing::Test::RecordProperty("correct", correct);
  ::testing::Test::RecordProperty("rejected_by_validity_check", rejected);
  std::printf("%d schedules correct on %s (%d samples rejected by the validity check)\n", correct,
              device->name.c_str(), rejected);
  EXPECT_GE(correct, valid + static_cast<int>(cases.size()));
}

TEST(CudaScheduleGpu, Gemm) {
  CheckOnGpu({{"gemm", "M=256,N=192,K=128", ""}, {"gemm", "M=127,N=33,K=17", "bias,relu"},
              {"gemm", "M=1024,N=1024,K=1024", ""}},
             50);
}

TEST(CudaScheduleGpu, BatchMatmul) {
  CheckOnGpu({{"batch_matmul", "B=4,M=64,N=96,K=80", "relu"}, {"batch_matmul", "B=3,M=17,N=24,K=9", ""}}, 50);
}

// Small outputs with long reductions: half the samples are split-K (two kernels and a workspace).
TEST(CudaScheduleGpu, SplitKShapes) {
  CheckOnGpu({{"conv2d", "N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1", "bias,relu"},
              {"gemm", "M=8,N=200,K=4096", ""},
              {"batch_matmul", "B=2,M=16,N=64,K=1000", "relu"}},
             40);
}

TEST(CudaScheduleGpu, Conv2d) {
  CheckOnGpu({{"conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", ""},
              {"conv2d", "N=2,C=16,H=15,W=13,K=24,R=3,S=3,stride=2,pad=1", "bias,relu"},
              {"conv2d", "N=1,C=32,H=14,W=14,K=32,R=3,S=3,pad=2,dilation=2,groups=32", "relu"}},
             50);
}

TEST(CudaScheduleGpu, Conv2dTranspose) {
  CheckOnGpu({{"conv2d_transpose", "N=1,C=512,H=4,W=4,K=256,R=4,S=4,stride=2,pad=1", "bias,relu"},
              {"conv2d_transpose", "N=2,C=32,H=15,W=15,K=16,R=3,S=3,stride=2,pad=1,output_padding=1", ""},
              {"conv2d_transpose", "N=1,C=24,H=9,W=9,K=24,R=3,S=3,pad=1,groups=3", "", "float16"}},
             30);
}

// Row operators: reductions across a block's threads (shared memory, barriers), several rows a block.
TEST(CudaScheduleGpu, RowOperators) {
  CheckOnGpu({{"softmax", "M=256,N=1000", ""},
              {"softmax", "M=37,N=4096", "", "float16"},
              {"layer_norm", "M=512,N=768", ""},
              {"rms_norm", "M=16,N=8192", "", "bfloat16"},
              {"add_rms_norm", "M=64,N=4096", "", "float16"},
              {"add_layer_norm", "M=33,N=1000", ""},
              {"norm", "B=2,M=300,N=170", ""}},
             40);
}

TEST(CudaScheduleGpu, Conv1dAndConv3d) {
  CheckOnGpu({{"conv1d", "N=1,C=64,L=256,K=128,R=3,stride=2,pad=1", "bias,relu"},
              {"conv1d", "N=2,C=32,L=77,K=32,R=5,pad=2,groups=32", ""},
              {"conv3d", "N=1,C=8,D=6,H=14,W=14,K=16,Q=3,R=3,S=3,pad=1", "relu"},
              {"conv3d", "N=1,C=3,D=8,H=28,W=28,K=16,Q=3,R=7,S=7,stride=2,pad=3", "", "float16"}},
             40);
}

// Every epilogue part (erf, tanh and sigmoid among them) in CUDA against the naive kernel.
TEST(CudaScheduleGpu, EpilogueChains) {
  CheckOnGpu({{"gemm", "M=128,N=96,K=64", "scale,shift,residual,gelu"},
              {"conv2d", "N=1,C=32,H=14,W=14,K=32,R=3,S=3,pad=1", "bias,silu", "float16"},
              {"batch_matmul", "B=2,M=33,N=40,K=24", "residual,gelu_tanh"},
              {"conv2d", "N=2,C=16,H=9,W=9,K=16,R=3,S=3,pad=1", "scale,shift,relu6", "bfloat16"}},
             30);
}

// float16 and bfloat16 tensors on the GPU: inputs rounded and packed by the executor, the reference
// kernel writing the output's type, the output widened and checked at the type's tolerance.
TEST(CudaScheduleGpu, SixteenBitTypes) {
  CheckOnGpu({{"gemm", "M=256,N=192,K=128", "bias,relu", "float16"},
              {"gemm", "M=127,N=33,K=17", "", "bfloat16"},
              {"batch_matmul", "B=3,M=17,N=24,K=9", "relu", "float16"},
              {"conv2d", "N=1,C=32,H=14,W=14,K=32,R=3,S=3,pad=1", "bias", "bfloat16"},
              {"conv2d", "N=1,C=512,H=7,W=7,K=511,R=3,S=3,pad=1", "", "float16"}},
             50);
}

}  // namespace
}  // namespace autotune::search
