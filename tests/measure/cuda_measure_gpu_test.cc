// NVRTC builder + CUDA runner end to end on a GPU (ctest label gpu): correct kernels, and every kind
// of failure (fault, hang, wrong answer, bad launch) coming back as a result while later candidates
// are still measured correctly. Skips itself where there is no CUDA driver, GPU or NVRTC. Timings
// are never asserted.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "measure/cuda_driver.h"
#include "measure/cuda_runner.h"
#include "measure/nvrtc_builder.h"
#include "measure/nvrtc_compiler.h"
#include "search/default_schedule.h"
#include "tests/measure/test_kernels.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"

namespace autotune::measure {
namespace {

namespace fs = std::filesystem;
using namespace autotune::test_kernels;

// C[M, N] = A[M, K] x B[K, N], one thread per output element (grid: N / 64 x M blocks of 64).
// `body` runs after `acc` is computed, `store` writes it: variants make wrong or faulting kernels.
std::string GemmSource(int64_t M, int64_t N, int64_t K, const std::string& before = "",
                       const std::string& store = "C[i * N + j] = acc;") {
  return fmt::format(R"(#define M {}
#define N {}
#define K {}
extern "C" __global__ void gemm(float* A, float* B, float* C) {{
  const int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= N) return;
  {}
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];
  {}
}}
)",
                     M, N, K, before, store);
}

BuildInput GemmModule(int64_t M, int64_t N, int64_t K, const std::string& before = "",
                      const std::string& store = "C[i * N + j] = acc;", int64_t block = 64) {
  tir::CudaModule m;
  m.code = GemmSource(M, N, K, before, store);
  m.kernels = {tir::CudaKernelLaunch{"gemm", {(N + block - 1) / block, M, 1}, {block, 1, 1}, 0}};
  m.num_params = 3;
  return BuildInput::FromCudaModule(std::move(m));
}

class CudaGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string tmpl = (fs::temp_directory_path() / "cuda_measure_gpu_test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    if (auto nvrtc = LoadNvrtc(); !nvrtc) {
      skip_ = nvrtc.error().message;
    } else if (auto device = QueryCudaDeviceIsolated(0); !device) {
      skip_ = device.error().message;
    } else {
      device_ = *device;
    }
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  static MeasureConfig Config() {
    MeasureConfig c;
    c.cache_dir = dir_;
    c.repeats = 3;
    c.warmup = 1;
    c.min_repeat_ms = 1;
    c.build_threads = 2;
    c.run_timeout_s = 30;
    return c;  // cuda_arch empty: read from the GPU
  }

  static std::vector<MeasureResult> Measure(CudaRunner& runner, const tir::Workload& w,
                                            const std::vector<BuildInput>& inputs, const MeasureConfig& c = Config()) {
    NvrtcBuilder builder(c);
    auto builds = builder.Build(inputs);
    for (size_t i = 0; i < builds.size(); ++i) {
      EXPECT_TRUE(builds[i].ok()) << "candidate " << i << ": " << builds[i].error_message;
    }
    return runner.Run(w, builds);
  }

  static std::string dir_;
  static std::string skip_;
  static CudaDeviceInfo device_;
};
std::string CudaGpu::dir_;
std::string CudaGpu::skip_;
CudaDeviceInfo CudaGpu::device_;

void ExpectCorrect(const MeasureResult& r, int repeats) {
  EXPECT_EQ(r.error_kind, ErrorKind::kNone) << r.error_message;
  EXPECT_TRUE(r.correct);
  EXPECT_LE(r.max_rel_error, 1e-4);
  EXPECT_EQ(r.latencies_ms.size(), static_cast<size_t>(repeats));
  EXPECT_GT(r.median_ms, 0);
  EXPECT_GE(r.spread, 0);
  // The repeats are part of the run, which also loads, checks and unloads the module.
  EXPECT_GT(r.timed_seconds, 0);
  EXPECT_LT(r.timed_seconds, r.run_seconds);
}

TEST_F(CudaGpu, DeviceInfo) {
  CudaRunner runner(Config());
  auto d = runner.Device();
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_FALSE(d->name.empty());
  EXPECT_GT(d->sm_count, 0);
  EXPECT_GT(d->l2_bytes, 0);
  EXPECT_GT(d->memory_bytes, 0);
  EXPECT_GE(d->max_shared_per_block_optin, d->max_shared_per_block);
  EXPECT_EQ(d->Arch(), device_.Arch());
  std::cout << "device: " << d->Describe() << "\n";
}

// The gemm 64x96x80 as two kernels: the products into a workspace of `workspace_bytes` (at least
// 64 x 96 floats), then a copy to the output; or only the copy when `write_workspace` is false.
BuildInput TwoKernelGemm(int64_t workspace_bytes, bool write_workspace = true) {
  tir::CudaModule two;
  two.code = GemmSource(64, 96, 80, "", "C[i * N + j] = acc;") + R"(
extern "C" __global__ void to_workspace(float* A, float* B, float* C, float* W) {
  const int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];
  W[i * N + j] = acc;
}
extern "C" __global__ void from_workspace(float* A, float* B, float* C, float* W) {
  const int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  C[i * N + j] = W[i * N + j];
}
)";
  if (write_workspace) two.kernels.push_back({"to_workspace", {3, 64, 1}, {32, 1, 1}, 0});
  two.kernels.push_back({"from_workspace", {3, 64, 1}, {32, 1, 1}, 0});
  two.num_params = 3;
  two.workspace_bytes = {workspace_bytes};
  return BuildInput::FromCudaModule(two);
}

TEST_F(CudaGpu, CorrectHandWrittenKernels) {
  CudaRunner runner(Config());
  const tir::Workload w = GemmWorkload(64, 96, 80);  // host reference (double accumulation)
  auto results = Measure(runner, w, {GemmModule(64, 96, 80), GemmModule(64, 96, 80, "", "C[i * N + j] = acc;", 32),
                                     TwoKernelGemm(64 * 96 * 4)});
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) ExpectCorrect(r, 3);
  for (const auto& r : results) std::cout << "  median " << r.median_ms << " ms, spread " << r.spread << "\n";
  EXPECT_EQ(runner.ExecutorStarts(), 1);
  const auto j = ToJson(results[0], w.flops);
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_GT(j["gflops"].get<double>(), 0);
}

TEST_F(CudaGpu, FaultIsRunErrorAndLaterCandidatesMeasureCorrectly) {
  CudaRunner runner(Config());
  const tir::Workload w = GemmWorkload(32, 64, 16);
  auto results = Measure(runner, w,
                         {GemmModule(32, 64, 16),
                          GemmModule(32, 64, 16, "", "C[i * N + j + (1ll << 40)] = acc;"),  // far out of bounds
                          GemmModule(32, 64, 16),
                          GemmModule(32, 64, 16, "", "*(float*)((char*)C + 2) = acc;"),  // misaligned
                          GemmModule(32, 64, 16)});
  ASSERT_EQ(results.size(), 5u);
  ExpectCorrect(results[0], 3);
  EXPECT_EQ(results[1].error_kind, ErrorKind::kRunError);
  EXPECT_NE(results[1].error_message.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << results[1].error_message;
  EXPECT_TRUE(results[1].latencies_ms.empty());
  ExpectCorrect(results[2], 3);
  EXPECT_EQ(results[3].error_kind, ErrorKind::kRunError);
  EXPECT_NE(results[3].error_message.find("CUDA_ERROR_MISALIGNED_ADDRESS"), std::string::npos)
      << results[3].error_message;
  ExpectCorrect(results[4], 3);
  EXPECT_EQ(runner.ExecutorStarts(), 3);  // a fresh executor after each fault
  std::cout << "  " << results[1].error_message << "\n  " << results[3].error_message << "\n";
}

TEST_F(CudaGpu, HangIsRunTimeoutAndTheRunnerRecovers) {
  MeasureConfig c = Config();
  c.run_timeout_s = 3;
  CudaRunner runner(c);
  const tir::Workload w = GemmWorkload(16, 64, 16);
  // A volatile read keeps the loop (inputs are in [-1, 1): it never ends).
  auto results = Measure(runner, w,
                         {GemmModule(16, 64, 16, "while (*(volatile float*)A < 10.0f) {}"), GemmModule(16, 64, 16)}, c);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].error_kind, ErrorKind::kRunTimeout) << results[0].error_message;
  ExpectCorrect(results[1], 3);
  EXPECT_EQ(runner.ExecutorStarts(), 2);
  std::cout << "  " << results[0].error_message << "; the next candidate ran in " << results[1].run_seconds << " s\n";
}

TEST_F(CudaGpu, WrongValuesAndUnwrittenElementsAreWrongAnswers) {
  CudaRunner runner(Config());
  const tir::Workload w = GemmWorkload(16, 64, 16);
  auto results = Measure(runner, w,
                         {GemmModule(16, 64, 16, "", "C[i * N + j] = acc + 0.5f;"),
                          GemmModule(16, 64, 16, "if (i == M - 1) return;"), GemmModule(16, 64, 16)});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].error_kind, ErrorKind::kWrongAnswer);
  EXPECT_FALSE(results[0].correct);
  EXPECT_GT(results[0].max_rel_error, 1e-3);
  EXPECT_TRUE(std::isfinite(results[0].max_rel_error));
  EXPECT_NE(results[0].error_message.find("1024 of 1024 elements differ"), std::string::npos)
      << results[0].error_message;
  EXPECT_EQ(results[1].error_kind, ErrorKind::kWrongAnswer);
  EXPECT_TRUE(std::isinf(results[1].max_rel_error));
  EXPECT_NE(results[1].error_message.find("64 of 1024 elements differ; element 960"), std::string::npos)
      << results[1].error_message;
  EXPECT_NE(results[1].error_message.find("never written"), std::string::npos) << results[1].error_message;
  EXPECT_TRUE(results[1].latencies_ms.empty());
  ExpectCorrect(results[2], 3);
  EXPECT_EQ(runner.ExecutorStarts(), 1);  // wrong answers do not harm the executor
}

// Workspaces are kept from one candidate to the next (allocating them took as long as the timing):
// one that reads a workspace it never wrote must not pass on what the one before left there.
TEST_F(CudaGpu, ReusedWorkspacesAreNotLeftovers) {
  CudaRunner runner(Config());
  const tir::Workload w = GemmWorkload(64, 96, 80);
  const int64_t bytes = 64 * 96 * 4;
  auto results = Measure(runner, w,
                         {TwoKernelGemm(bytes), TwoKernelGemm(bytes, false), TwoKernelGemm(4 * bytes),
                          TwoKernelGemm(bytes, false), TwoKernelGemm(bytes)});
  ASSERT_EQ(results.size(), 5u);
  ExpectCorrect(results[0], 3);
  EXPECT_EQ(results[1].error_kind, ErrorKind::kWrongAnswer) << results[1].error_message;
  ExpectCorrect(results[2], 3);  // a larger workspace than the pool had
  EXPECT_EQ(results[3].error_kind, ErrorKind::kWrongAnswer) << results[3].error_message;
  ExpectCorrect(results[4], 3);
  EXPECT_EQ(runner.ExecutorStarts(), 1);
}

TEST_F(CudaGpu, CandidateThatWritesItsInputsDoesNotSpoilTheNext) {
  CudaRunner runner(Config());
  const tir::Workload w = GemmWorkload(16, 64, 16);
  // Writes over all of A and B once it has stored its (racy) result.
  auto results = Measure(runner, w,
                         {GemmModule(16, 64, 16, "", "C[i * N + j] = acc; A[i * K + j % K] = 7.0f; B[j] = -3.0f;"),
                          GemmModule(16, 64, 16)});
  EXPECT_NE(results[0].error_kind, ErrorKind::kRunError) << results[0].error_message;
  ExpectCorrect(results[1], 3);
  EXPECT_EQ(runner.ExecutorStarts(), 1);
}

TEST_F(CudaGpu, ScreeningGivesCandidatesFarBehindTheBestOneRepeat) {
  MeasureConfig c = Config();
  c.screen_ratio = 1.5;
  CudaRunner runner(c);
  const tir::Workload w = GemmWorkload(16, 64, 16);
  // The same gemm spinning ~2 ms (4 M cycles) before its store: far behind the plain one.
  const std::string spin = "const long long t0 = clock64(); while (clock64() - t0 < 4000000) {} C[i * N + j] = acc;";
  auto results =
      Measure(runner, w, {GemmModule(16, 64, 16), GemmModule(16, 64, 16, "", spin), GemmModule(16, 64, 16)}, c);
  ExpectCorrect(results[0], 3);
  ExpectCorrect(results[1], 1);
  ExpectCorrect(results[2], 3);
  EXPECT_EQ(runner.ExecutorStarts(), 1);
}

// MeasureConfig::cuda_graph: the repeats replay captured runs, one kernel or two (with a workspace),
// and a candidate that faults is still a run error after which the next one measures (not timings).
TEST_F(CudaGpu, RepeatsAsCudaGraphs) {
  MeasureConfig c = Config();
  c.cuda_graph = true;
  CudaRunner runner(c);
  const tir::Workload w = GemmWorkload(64, 96, 80);
  auto results = Measure(runner, w,
                         {GemmModule(64, 96, 80), TwoKernelGemm(64 * 96 * 4),
                          GemmModule(64, 96, 80, "", "C[i * N + j + (1ll << 40)] = acc;"), GemmModule(64, 96, 80)},
                         c);
  ASSERT_EQ(results.size(), 4u);
  ExpectCorrect(results[0], 3);
  ExpectCorrect(results[1], 3);
  EXPECT_EQ(results[2].error_kind, ErrorKind::kRunError) << results[2].error_message;
  ExpectCorrect(results[3], 3);
  for (const auto& r : results) std::cout << "  graph median " << r.median_ms << " ms\n";
}

TEST_F(CudaGpu, BadLaunchIsRunErrorWithoutRestart) {
  CudaRunner runner(Config());
  const tir::Workload w = GemmWorkload(16, 64, 16);
  BuildInput too_many_threads = GemmModule(16, 64, 16);
  too_many_threads.kernels[0].block = {2048, 1, 1};  // above the 1024 threads of a block
  auto results = Measure(runner, w, {too_many_threads, GemmModule(16, 64, 16)});
  EXPECT_EQ(results[0].error_kind, ErrorKind::kRunError);
  EXPECT_NE(results[0].error_message.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("cuLaunchKernel"), std::string::npos) << results[0].error_message;
  ExpectCorrect(results[1], 3);
  EXPECT_EQ(runner.ExecutorStarts(), 1);  // a launch error leaves the context usable
}

TEST_F(CudaGpu, DynamicSharedMemoryAbove48KB) {
  // Each block (one row i) zeroes 64 KB of dynamic shared memory and keeps its row of A at the very
  // end of it, above the 48 KB that needs no opt-in; threads then read A from there.
  constexpr int64_t kFloats = 16384;  // 64 KB
  tir::CudaModule m;
  m.code = fmt::format(R"(#define M 16
#define N 64
#define K 32
#define S {}
extern "C" __global__ void gemm_smem(float* A, float* B, float* C) {{
  extern __shared__ float smem[];
  const int i = blockIdx.y, j = threadIdx.x;
  for (int t = threadIdx.x; t < S; t += blockDim.x) smem[t] = 0.0f;
  __syncthreads();
  for (int k = threadIdx.x; k < K; k += blockDim.x) smem[S - K + k] = A[i * K + k];
  __syncthreads();
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += smem[S - K + k] * B[k * N + j];
  C[i * N + j] = acc;
}}
)",
                       kFloats);
  m.kernels = {{"gemm_smem", {1, 16, 1}, {64, 1, 1}, kFloats * 4}};
  m.num_params = 3;
  CudaRunner runner(Config());
  auto results = Measure(runner, GemmWorkload(16, 64, 32), {BuildInput::FromCudaModule(m)});
  ExpectCorrect(results[0], 3);
}

TEST_F(CudaGpu, GpuReferenceOfARealWorkload) {
  // gemm from the operator registry has a compute definition: the reference is the naive schedule,
  // generated, compiled and run on this GPU.
  auto w = tir::MakeWorkload("gemm", "M=64,N=128,K=96");
  ASSERT_TRUE(w) << w.error().message;
  std::vector<BuildInput> inputs = {GemmModule(64, 128, 96), GemmModule(64, 128, 96, "", "C[i * N + j] = -acc;")};
  auto sch = search::DefaultSchedule(*w, tir::TargetKind::kCuda);
  ASSERT_TRUE(sch) << sch.error().message;
  auto f = tir::Lower(sch->state());
  ASSERT_TRUE(f) << f.error().message;
  inputs.push_back(BuildInput::FromFunc(*f));
  CudaRunner runner(Config());
  auto results = Measure(runner, *w, inputs);
  ExpectCorrect(results[0], 3);
  EXPECT_EQ(results[1].error_kind, ErrorKind::kWrongAnswer);
  ExpectCorrect(results[2], 3);
}

TEST_F(CudaGpu, ConvolutionWithEpilogueAgainstGpuReference) {
  // ResNet's 3x3 convolution: the reference (naive schedule, padding as its own stage) and the
  // default CUDA schedule, both generated.
  auto w = tir::MakeWorkload("conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", "bias,relu");
  ASSERT_TRUE(w) << w.error().message;
  auto sch = search::DefaultSchedule(*w, tir::TargetKind::kCuda);
  ASSERT_TRUE(sch) << sch.error().message;
  auto f = tir::Lower(sch->state());
  ASSERT_TRUE(f) << f.error().message;
  CudaRunner runner(Config());
  NvrtcBuilder builder(Config());
  auto builds = builder.Build({BuildInput::FromFunc(*f)});
  ASSERT_TRUE(builds[0].ok()) << builds[0].error_message;
  auto results = runner.Run(*w, builds);
  ExpectCorrect(results[0], 3);
  std::cout << "  default schedule: " << results[0].median_ms << " ms (" << w->flops / (results[0].median_ms * 1e6)
            << " GFLOP/s), " << builds[0].registers << " registers, " << builds[0].spill_bytes << " spill bytes, "
            << builds[0].kernels.size() << " kernel(s), max rel. error " << results[0].max_rel_error << "\n";
}

TEST_F(CudaGpu, BuildErrorsPassThrough) {
  CudaRunner runner(Config());
  NvrtcBuilder builder(Config());
  auto builds = builder.Build({GemmModule(16, 64, 16, "this does not compile;"), GemmModule(16, 64, 16)});
  auto results = runner.Run(GemmWorkload(16, 64, 16), builds);
  EXPECT_EQ(results[0].error_kind, ErrorKind::kBuildError);
  ExpectCorrect(results[1], 3);
}

}  // namespace
}  // namespace autotune::measure
