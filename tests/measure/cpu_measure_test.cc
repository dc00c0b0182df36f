// C builder + CPU runner end to end: correct kernels (CPU and GPU-style schedules), and every kind of
// failure coming back as a result while the measurement keeps working. Timings are never asserted.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "measure/c_builder.h"
#include "measure/cpu_runner.h"
#include "measure/reference_check.h"
#include "support/sha256.h"
#include "measure/workload_data.h"
#include "tests/measure/test_kernels.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/schedule/schedule.h"

namespace autotune::measure {
namespace {

using namespace autotune::test_kernels;
using tir::PrimFunc;

class CpuMeasure : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cpu_measure_test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    cache_dir_ = tmpl;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(cache_dir_); }

  static MeasureConfig Config() {
    MeasureConfig c;
    c.cache_dir = cache_dir_;
    c.repeats = 3;
    c.warmup = 1;
    c.min_repeat_ms = 0.5;
    c.flush_bytes = 1 << 20;
    c.build_threads = 2;
    c.num_threads = 2;
    c.run_timeout_s = 20;
    return c;
  }

  std::vector<MeasureResult> Measure(const Workload& w, const std::vector<BuildInput>& inputs,
                                     const MeasureConfig& config = Config()) {
    CBuilder builder(config);
    CpuRunner runner(config);
    return runner.Run(w, builder.Build(inputs));
  }

  static std::string cache_dir_;
};
std::string CpuMeasure::cache_dir_;

// Three params, like the gemm workload, so the runner's argument check passes.
BuildInput Source(const std::string& body) {
  return BuildInput::FromSource("void k(float* A, float* B, float* C) {\n" + body + "\n}\n", "k", 3);
}

void ExpectCorrect(const MeasureResult& r, int repeats) {
  EXPECT_EQ(r.error_kind, ErrorKind::kNone) << r.error_message;
  EXPECT_TRUE(r.correct);
  EXPECT_LE(r.max_rel_error, 1e-4);
  EXPECT_EQ(r.latencies_ms.size(), static_cast<size_t>(repeats));
  EXPECT_GT(r.median_ms, 0);
  EXPECT_GE(r.spread, 0);
}

// --threads reaches the kernel even when the measuring process has OpenMP loaded before it forks (the
// CLI has: XGBoost uses it), when OpenMP no longer reads OMP_NUM_THREADS.
TEST_F(CpuMeasure, KernelsRunOnTheConfiguredThreadCount) {
  ASSERT_NE(dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  Workload w = GemmWorkload(1, 1, 1);
  w.reference = [](const std::vector<const float*>&, float* out) { out[0] = 1; };
  MeasureConfig one = Config();
  one.num_threads = 1;
  const std::string source = "#include <omp.h>\nvoid k(float* A, float* B, float* C) {\n  int n = 0;\n"
                             "  #pragma omp parallel\n  {\n    #pragma omp single\n    n = omp_get_num_threads();\n  }\n"
                             "  C[0] = (float)n;\n}\n";
  auto r = Measure(w, {BuildInput::FromSource(source, "k", 3)}, one);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].error_kind, ErrorKind::kNone) << r[0].error_message;
  EXPECT_TRUE(r[0].correct) << "the kernel ran on more than one thread";
}

TEST_F(CpuMeasure, CorrectKernelsOfEverySchedule) {
  const Workload w = GemmWorkload(64, 48, 40);
  auto results = Measure(w, {BuildInput::FromFunc(NaiveGemm(64, 48, 40)),
                             BuildInput::FromFunc(CpuTiledGemm(64, 48, 40)),
                             BuildInput::FromFunc(GpuTiledGemm(64, 48, 40))});
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) ExpectCorrect(r, 3);
  const auto j = ToJson(results[1], w.flops);
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_GT(j["gflops"].get<double>(), 0);
}

// A kernel that takes B packed (by 16 of 40 columns: the last block half zeros) gets it made once by
// its pack function, before the checked and the timed calls; a pack function it lacks is an error.
TEST_F(CpuMeasure, PackedInputsAreMadeBeforeTheKernelRuns) {
  auto made = tir::MakeWorkload("gemm", "M=64,N=40,K=24");
  ASSERT_TRUE(made) << made.error().message;
  const Workload& w = *made;
  tir::Schedule s(w, tir::TargetKind::kCpu);
  ASSERT_TRUE(s.PackInput("B", 1, {int64_t{16}}));
  auto f = tir::Lower(s.state());
  ASSERT_TRUE(f) << f.error().message;
  BuildInput missing = BuildInput::FromSource("void k(float* A, float* B, float* C) {}\n", "k", 3);
  missing.packs.push_back({1, "no_such_pack", 24 * 48});
  auto results = Measure(w, {BuildInput::FromFunc(*f), missing});
  ASSERT_EQ(results.size(), 2u);
  ExpectCorrect(results[0], 3);
  EXPECT_EQ(results[1].error_kind, ErrorKind::kRunError);
  EXPECT_NE(results[1].error_message.find("pack function no_such_pack"), std::string::npos) << results[1].error_message;
}

// A correct 8x8x8 gemm that spins for milliseconds: a thousand times slower than the naive one.
BuildInput SlowGemm() {
  return Source(
      "for (int i = 0; i < 8; ++i) for (int j = 0; j < 8; ++j) {\n"
      "  double acc = 0; for (int k = 0; k < 8; ++k) acc += (double)A[i * 8 + k] * B[k * 8 + j];\n"
      "  C[i * 8 + j] = (float)acc; }\n"
      "volatile long spin = 0; for (long s = 0; s < 3000000; ++s) spin += s;");
}

TEST_F(CpuMeasure, ScreeningGivesCandidatesFarBehindTheBestOneRepeat) {
  MeasureConfig c = Config();
  c.screen_ratio = 1.5;
  auto results = Measure(GemmWorkload(8, 8, 8), {SlowGemm(), BuildInput::FromFunc(NaiveGemm(8, 8, 8)), SlowGemm()}, c);
  ExpectCorrect(results[0], 3);  // nothing timed before it: all repeats
  ExpectCorrect(results[1], 3);  // the new best
  ExpectCorrect(results[2], 1);  // far behind it
  EXPECT_GT(results[2].median_ms, 1.5 * results[1].median_ms);
  // Off: every candidate gets all its repeats.
  c.screen_ratio = 0;
  results = Measure(GemmWorkload(8, 8, 8), {BuildInput::FromFunc(NaiveGemm(8, 8, 8)), SlowGemm()}, c);
  ExpectCorrect(results[0], 3);
  ExpectCorrect(results[1], 3);
}

TEST_F(CpuMeasure, CompileErrorIsBuildErrorWithTheLog) {
  auto results = Measure(GemmWorkload(8, 8, 8), {Source("C[0] = A[0] + ;"), BuildInput::FromFunc(NaiveGemm(8, 8, 8))});
  EXPECT_EQ(results[0].error_kind, ErrorKind::kBuildError);
  EXPECT_NE(results[0].error_message.find("kernel.c:2"), std::string::npos) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("error"), std::string::npos) << results[0].error_message;
  ExpectCorrect(results[1], 3);
}

TEST_F(CpuMeasure, CompilerPastTheTimeLimitIsBuildTimeout) {
  MeasureConfig c = Config();
  c.build_timeout_s = 0.001;
  c.cache_dir = cache_dir_ + "/timeout";  // nothing cached: the compiler must run
  auto results = Measure(GemmWorkload(8, 8, 8), {BuildInput::FromFunc(NaiveGemm(8, 8, 8))}, c);
  EXPECT_EQ(results[0].error_kind, ErrorKind::kBuildTimeout) << results[0].error_message;
}

TEST_F(CpuMeasure, BuiltObjectsAreCached) {
  MeasureConfig c = Config();
  c.cache_dir = cache_dir_ + "/cache";
  CBuilder builder(c);
  auto first = builder.Build({BuildInput::FromFunc(NaiveGemm(8, 8, 8)), BuildInput::FromFunc(NaiveGemm(8, 8, 4))});
  auto again = builder.Build({BuildInput::FromFunc(NaiveGemm(8, 8, 8))});
  ASSERT_TRUE(first[0].ok() && first[1].ok() && again[0].ok());
  EXPECT_FALSE(first[0].cached);
  EXPECT_NE(first[0].artifact, first[1].artifact);
  EXPECT_TRUE(again[0].cached);
  EXPECT_EQ(again[0].artifact, first[0].artifact);
  EXPECT_EQ(std::filesystem::path(first[0].artifact).stem().string().size(), 64u);  // SHA-256 hex
}

TEST_F(CpuMeasure, CrashIsRunErrorAndTheRunnerKeepsWorking) {
  // Writes every 64 Ki floats for 2 G floats past the output: faults on the first unmapped page.
  tir::Buffer A = Flat("A", 64), B = Flat("B", 64), C = Flat("C", 64);
  tir::Var i = tir::MakeVar("i");
  PrimFunc oob{"oob", {A, B, C}, Loop(i, 30000, tir::Store(C, F(1), {i * 65536}))};
  auto results = Measure(GemmWorkload(8, 8, 8), {BuildInput::FromFunc(oob), Source("__builtin_trap();"),
                                                 BuildInput::FromFunc(NaiveGemm(8, 8, 8))});
  EXPECT_EQ(results[0].error_kind, ErrorKind::kRunError);
  EXPECT_NE(results[0].error_message.find("SIGSEGV"), std::string::npos) << results[0].error_message;
  EXPECT_EQ(results[1].error_kind, ErrorKind::kRunError);
  EXPECT_NE(results[1].error_message.find("SIGILL"), std::string::npos) << results[1].error_message;
  ExpectCorrect(results[2], 3);
}

TEST_F(CpuMeasure, HangIsRunTimeout) {
  MeasureConfig c = Config();
  c.run_timeout_s = 0.5;
  auto results = Measure(GemmWorkload(8, 8, 8),
                         {Source("volatile int spin = 1; while (spin) {}"), BuildInput::FromFunc(NaiveGemm(8, 8, 8))}, c);
  EXPECT_EQ(results[0].error_kind, ErrorKind::kRunTimeout) << results[0].error_message;
  ExpectCorrect(results[1], 3);
}

TEST_F(CpuMeasure, WrongValueAndUnwrittenElementsAreWrongAnswers) {
  auto results = Measure(GemmWorkload(16, 16, 16), {BuildInput::FromFunc(NaiveGemm(16, 16, 16, /*init=*/0.5)),
                                                    BuildInput::FromFunc(NaiveGemm(16, 16, 16, 0.0, /*rows=*/15))});
  EXPECT_EQ(results[0].error_kind, ErrorKind::kWrongAnswer);
  EXPECT_FALSE(results[0].correct);
  EXPECT_GT(results[0].max_rel_error, 1e-3);
  EXPECT_TRUE(std::isfinite(results[0].max_rel_error));
  EXPECT_NE(results[0].error_message.find("256 of 256 elements differ"), std::string::npos) << results[0].error_message;
  EXPECT_EQ(results[1].error_kind, ErrorKind::kWrongAnswer);
  EXPECT_TRUE(std::isinf(results[1].max_rel_error));
  EXPECT_NE(results[1].error_message.find("16 of 256 elements differ; element 240"), std::string::npos)
      << results[1].error_message;
  EXPECT_NE(results[1].error_message.find("never written"), std::string::npos) << results[1].error_message;
  EXPECT_TRUE(results[1].latencies_ms.empty());
}

TEST_F(CpuMeasure, InvalidGpuProgramIsInvalidSchedule) {
  tir::Buffer A = Flat("A", 64), B = Flat("B", 64), C = Flat("C", 64), S = Flat("S", 4, tir::Scope::kShared);
  tir::Var tx = tir::MakeVar("tx");
  Stmt body = tir::Allocate(
      S, ThreadLoop(tx, 4, tir::ThreadTag::kThreadIdxX,
                    tir::IfThenElse(tir::LT(tx, I(2)), tir::Seq({tir::Store(S, F(1), {tx}), tir::Barrier()}))));
  auto results = Measure(GemmWorkload(8, 8, 8), {BuildInput::FromFunc(PrimFunc{"bad", {A, B, C}, body})});
  EXPECT_EQ(results[0].error_kind, ErrorKind::kInvalidSchedule);
}

TEST_F(CpuMeasure, WrongArgumentCountIsRunError) {
  auto results = Measure(GemmWorkload(8, 8, 8), {BuildInput::FromSource("void k(float* A) {}", "k", 1)});
  EXPECT_EQ(results[0].error_kind, ErrorKind::kRunError);
}

// ---- pieces -------------------------------------------------------------------------------------

TEST(ReferenceCheck, ScalesNearZeroElementsAndRejectsNaN) {
  const float ref[4] = {10, -10, 1e-6f, 10};
  const double scale = ReferenceScale(ref, 4);
  EXPECT_NEAR(scale, 7.5, 1e-6);
  const float close[4] = {10.0001f, -10, 1e-4f, 10};  // 1e-4 absolute on a near-zero element is fine
  EXPECT_TRUE(CheckOutput(close, ref, 4, scale, 1e-4).correct);
  const float off[4] = {10.01f, -10, 1e-6f, 10};
  CheckResult c = CheckOutput(off, ref, 4, scale, 1e-4);
  EXPECT_FALSE(c.correct);
  EXPECT_EQ(c.worst_index, 0);
  EXPECT_NEAR(c.max_rel_error, 1e-3, 1e-5);
  const float nan[4] = {10, -10, std::numeric_limits<float>::quiet_NaN(), 10};
  c = CheckOutput(nan, ref, 4, scale, 1e-4);
  EXPECT_FALSE(c.correct);
  EXPECT_EQ(c.worst_index, 2);
  EXPECT_TRUE(std::isinf(c.max_rel_error));
}

// Outputs of millions of elements are checked in slices on several threads: same verdict, count and
// worst element (the first of equals) as one pass in order.
TEST(ReferenceCheck, LargeOutputsGiveTheSameResultInSlices) {
  const int64_t n = int64_t{5} << 20;
  std::vector<float> ref(static_cast<size_t>(n), 1.0f), out = ref;
  EXPECT_TRUE(CheckOutput(out.data(), ref.data(), n, 1.0, 1e-4).correct);
  out[100] = 1.5f;                   // slice 0
  out[(int64_t{3} << 20) + 7] = 3;   // a later slice: the worst (error 2)
  out[(int64_t{4} << 20) + 9] = 3;   // as bad, later: not the one reported
  out[n - 1] = 1.00001f;             // within tolerance
  CheckResult c = CheckOutput(out.data(), ref.data(), n, 1.0, 1e-4);
  EXPECT_FALSE(c.correct);
  EXPECT_EQ(c.mismatches, 3);
  EXPECT_EQ(c.worst_index, (int64_t{3} << 20) + 7);
  EXPECT_FLOAT_EQ(c.got, 3.0f);
  EXPECT_FLOAT_EQ(c.expected, 1.0f);
  EXPECT_NEAR(c.max_rel_error, 2.0, 1e-9);
  out[(int64_t{2} << 20) + 1] = std::numeric_limits<float>::quiet_NaN();  // unwritten: worse than any
  c = CheckOutput(out.data(), ref.data(), n, 1.0, 1e-4);
  EXPECT_EQ(c.mismatches, 4);
  EXPECT_EQ(c.worst_index, (int64_t{2} << 20) + 1);
  EXPECT_TRUE(std::isinf(c.max_rel_error));
}

TEST(WorkloadData, InputsAreDeterministicNonZeroAndInRange) {
  WorkloadDataCache cache;
  const Workload w = GemmWorkload(8, 8, 8);
  auto a = cache.Get(w, 7);
  EXPECT_EQ(cache.Get(w, 7), a);  // made once
  WorkloadDataCache other;
  auto b = other.Get(w, 7);
  ASSERT_EQ(a->inputs.size(), 2u);
  int zeros = 0;
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_EQ(a->inputs[0].data()[i], b->inputs[0].data()[i]);
    EXPECT_GE(a->inputs[0].data()[i], -1.0f);
    EXPECT_LT(a->inputs[0].data()[i], 1.0f);
    zeros += a->inputs[0].data()[i] == 0.0f;
  }
  EXPECT_LT(zeros, 2);
  EXPECT_NE(a->inputs[0].data()[0], a->inputs[1].data()[0]);
  EXPECT_NE(cache.Get(w, 8)->inputs[0].data()[0], a->inputs[0].data()[0]);
}

TEST(MeasureResult, JsonRoundTrip) {
  MeasureResult ok;
  ok.latencies_ms = {2.0, 1.0, 4.0};
  ok.correct = true;
  ok.max_rel_error = 1e-6;
  ok.run_seconds = 0.05;
  ok.timed_seconds = 0.03;
  Summarize(ok);
  EXPECT_DOUBLE_EQ(ok.median_ms, 2.0);
  EXPECT_DOUBLE_EQ(ok.spread, 1.5);
  auto j = ToJson(ok, 2e6);
  EXPECT_DOUBLE_EQ(j["latency_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["gflops"].get<double>(), 1.0);
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_EQ(j["error_kind"], "NONE");
  MeasureResult back = MeasureResultFromJson(j);
  EXPECT_EQ(back.latencies_ms, ok.latencies_ms);
  EXPECT_TRUE(back.correct);
  EXPECT_DOUBLE_EQ(back.run_seconds, 0.05);
  EXPECT_DOUBLE_EQ(back.timed_seconds, 0.03);

  MeasureResult bad = MeasureResult::Error(ErrorKind::kRunTimeout, "the run exceeded 1 s");
  j = ToJson(bad, 2e6);
  EXPECT_EQ(j["error"], "RUN_TIMEOUT: the run exceeded 1 s");
  EXPECT_TRUE(j["latency_ms"].is_null());
  EXPECT_TRUE(j["gflops"].is_null());
  back = MeasureResultFromJson(j);
  EXPECT_EQ(back.error_kind, ErrorKind::kRunTimeout);
  EXPECT_EQ(back.error_message, "the run exceeded 1 s");
  for (auto k : {ErrorKind::kNone, ErrorKind::kInvalidSchedule, ErrorKind::kBuildError, ErrorKind::kBuildTimeout,
                 ErrorKind::kRunError, ErrorKind::kRunTimeout, ErrorKind::kWrongAnswer}) {
    EXPECT_EQ(ParseErrorKind(ErrorKindName(k)), k);
  }
}

TEST(Sha256, KnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace autotune::measure
