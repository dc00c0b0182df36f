// The cuda target's measurement pieces that need no GPU: NVRTC compiles of hand-written and
// generated kernels to cubins for sm_90, compile errors, the cache, time limits, ptxas reports, and
// the driver loader and runner failing cleanly where there is no driver. Tests that need NVRTC skip
// themselves where it cannot be loaded. GPU tests are in cuda_measure_gpu_test.cc (label gpu).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <tuple>

#include "measure/cuda_driver.h"
#include "measure/cuda_runner.h"
#include "measure/nvrtc_builder.h"
#include "measure/nvrtc_compiler.h"
#include "measure/nvrtc_helper_pool.h"
#include "measure/subprocess.h"
#include "search/default_schedule.h"
#include "tests/measure/test_kernels.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/schedule/naive_gpu_schedule.h"

namespace autotune::measure {
namespace {

namespace fs = std::filesystem;
using namespace autotune::test_kernels;

// C[i] = A[i] + B[i] over n elements, one thread each.
constexpr const char* kAddSource = R"(extern "C" __global__ void vadd(const float* A, const float* B, float* C) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 4096) C[i] = A[i] + B[i];
}
)";

BuildInput CudaSource(const std::string& code, const std::string& entry, int64_t grid = 16, int64_t block = 256,
                      int64_t dynamic_shared = 0) {
  tir::CudaModule m;
  m.code = code;
  m.kernels = {tir::CudaKernelLaunch{entry, {grid, 1, 1}, {block, 1, 1}, dynamic_shared}};
  m.num_params = 3;
  return BuildInput::FromCudaModule(std::move(m));
}

class CudaBuild : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string tmpl = (fs::temp_directory_path() / "cuda_measure_test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override {
    auto nvrtc = LoadNvrtc();
    if (!nvrtc) GTEST_SKIP() << nvrtc.error().message;
  }

  // sm_90 named explicitly: these tests need no GPU.
  static MeasureConfig Config(const std::string& cache = "cache") {
    MeasureConfig c;
    c.cache_dir = (fs::path(dir_) / cache).string();
    c.cuda_arch = "sm_90";
    c.build_threads = 2;
    c.build_timeout_s = 60;
    return c;
  }

  static std::string dir_;
};
std::string CudaBuild::dir_;

TEST_F(CudaBuild, HandWrittenKernelBecomesACubinForSm90) {
  NvrtcBuilder builder(Config());
  ASSERT_TRUE(builder.Arch()) << builder.Arch().error().message;
  EXPECT_EQ(*builder.Arch(), "sm_90");
  auto results = builder.Build({CudaSource(kAddSource, "vadd")});
  ASSERT_EQ(results.size(), 1u);
  const BuildResult& r = results[0];
  ASSERT_TRUE(r.ok()) << r.error_message;
  EXPECT_EQ(r.entry, "vadd");
  EXPECT_EQ(r.num_params, 3);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].grid[0], 16);
  EXPECT_EQ(fs::path(r.artifact).extension(), ".cubin");
  EXPECT_EQ(static_cast<int64_t>(fs::file_size(r.artifact)), r.binary_bytes);
  std::ifstream f(r.artifact, std::ios::binary);
  char magic[4] = {};
  f.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4), "\x7f" "ELF");  // a cubin is an ELF file
  EXPECT_GT(r.registers, 0);
  EXPECT_EQ(r.spill_bytes, 0);
  EXPECT_NE(r.log.find("ptxas"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("sm_90"), std::string::npos) << r.log;
  EXPECT_EQ(r.source, kAddSource);
}

TEST_F(CudaBuild, OptionsAreTheDocumentedOnes) {
  MeasureConfig c = Config();
  c.cuda_lineinfo = true;
  c.nvrtc_options = {"-DEXTRA=1"};
  NvrtcBuilder builder(c);
  auto options = builder.Options();
  ASSERT_TRUE(options) << options.error().message;
  const std::vector<std::string> expected = {"--gpu-architecture=sm_90", "-default-device", "--std=c++17",
                                             "--ptxas-options=-v", "-lineinfo", "-DEXTRA=1"};
  EXPECT_EQ(*options, expected);
  for (const auto& o : *options) EXPECT_EQ(o.find("fast_math"), std::string::npos);
}

TEST_F(CudaBuild, CompileErrorIsBuildErrorWithTheLog) {
  NvrtcBuilder builder(Config());
  auto results = builder.Build({CudaSource("extern \"C\" __global__ void k(float* A, float* B, float* C) {\n"
                                           "  C[0] = A[0] + ;\n}\n",
                                           "k"),
                                CudaSource(kAddSource, "vadd")});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].error_kind, ErrorKind::kBuildError);
  EXPECT_NE(results[0].error_message.find("kernel.cu(2)"), std::string::npos) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("error"), std::string::npos) << results[0].error_message;
  EXPECT_TRUE(results[0].artifact.empty());
  EXPECT_TRUE(results[1].ok()) << results[1].error_message;  // the batch goes on
}

// The helper this build made, or the one $AUTOTUNE_NVRTC_HELPER names, as for autotune itself (the
// bundle's run-tests sets it: on the GPU machine the build tree is not there).
std::string HelperUnderTest() {
  const char* env = std::getenv("AUTOTUNE_NVRTC_HELPER");
  return env && *env ? env : AUTOTUNE_NVRTC_HELPER_PATH;
}

// The helper executable (what the autotune CLI compiles with) answers like the forked child the
// test executables use: a cubin with ptxas's report, a compile error with its log, NVRTC's own
// failure with a message; and its CPU time is measured.
TEST_F(CudaBuild, TheHelperCompilesLikeAForkedChild) {
  const std::string helper = HelperUnderTest();
  const std::vector<std::string> options = NvrtcOptions("sm_90", Config());
  NvrtcOutput ok = CompileToCubinInHelper(helper, kAddSource, options, 60);
  ASSERT_EQ(ok.status, NvrtcOutput::Status::kOk) << ok.message;
  EXPECT_EQ(ok.cubin.substr(0, 4), "\x7f" "ELF");
  EXPECT_NE(ok.log.find("ptxas"), std::string::npos) << ok.log;
  EXPECT_GT(ok.cpu_seconds, 0);
  const NvrtcOutput forked = CompileToCubinIsolated(**LoadNvrtc(), kAddSource, options, 60);
  ASSERT_EQ(forked.status, NvrtcOutput::Status::kOk) << forked.message;
  EXPECT_EQ(ParsePtxasInfo(ok.log).registers, ParsePtxasInfo(forked.log).registers);

  NvrtcOutput bad = CompileToCubinInHelper(helper, "extern \"C\" __global__ void k() { x; }\n", options, 60);
  EXPECT_EQ(bad.status, NvrtcOutput::Status::kCompileError);
  EXPECT_NE(bad.log.find("error"), std::string::npos) << bad.log;

  std::vector<std::string> unknown = options;
  unknown.push_back("--no-such-option");
  NvrtcOutput failed = CompileToCubinInHelper(helper, kAddSource, unknown, 60);
  EXPECT_EQ(failed.status, NvrtcOutput::Status::kFailed);
  EXPECT_NE(failed.message.find("nvrtcCompileProgram"), std::string::npos) << failed.message;

  NvrtcOutput missing = CompileToCubinInHelper((fs::path(dir_) / "no-helper").string(), kAddSource, options, 60);
  EXPECT_EQ(missing.status, NvrtcOutput::Status::kFailed);
  EXPECT_NE(missing.message.find("cannot start"), std::string::npos) << missing.message;
}

// A helper past its CPU limit is a timeout (the limit is the helper's own RLIMIT_CPU: a stand-in
// script sets it the same way), one that answers nothing within the wall limit too; one that ends
// without a result says what it printed.
TEST(NvrtcHelper, CpuLimitIsATimeoutAndAMissingResultIsReported) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("nvrtc_helper_test-{}", getpid());
  fs::create_directories(dir);
  const fs::path spin = dir / "spin";
  std::ofstream(spin) << "#!/bin/sh\nulimit -S -t 1\nwhile :; do :; done\n";
  const fs::path sleeper = dir / "sleeper";
  std::ofstream(sleeper) << "#!/bin/sh\nexec sleep 60\n";
  const fs::path quiet = dir / "quiet";
  std::ofstream(quiet) << "#!/bin/sh\necho 'no NVRTC here' >&2\nexit 3\n";
  for (const auto& f : {spin, sleeper, quiet}) fs::permissions(f, fs::perms::owner_all);

  NvrtcOutput slow = CompileToCubinInHelper(spin.string(), "//", {}, 1);
  EXPECT_EQ(slow.status, NvrtcOutput::Status::kTimeout) << slow.message;
  EXPECT_NE(slow.message.find("CPU time"), std::string::npos) << slow.message;  // not the wall limit (4 s)

  const auto t0 = std::chrono::steady_clock::now();
  NvrtcOutput stuck = CompileToCubinInHelper(sleeper.string(), "//", {}, 0.25);
  EXPECT_EQ(stuck.status, NvrtcOutput::Status::kTimeout) << stuck.message;
  EXPECT_NE(stuck.message.find("wall time"), std::string::npos) << stuck.message;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);

  NvrtcOutput none = CompileToCubinInHelper(quiet.string(), "//", {}, 10);
  EXPECT_EQ(none.status, NvrtcOutput::Status::kFailed);
  EXPECT_NE(none.message.find("code 3"), std::string::npos) << none.message;
  EXPECT_NE(none.message.find("no NVRTC here"), std::string::npos) << none.message;
  fs::remove_all(dir);
}

TEST(NvrtcHelper, RequestsSurviveTheirEncoding) {
  const HelperRequest sent{2.5, {"--gpu-architecture=sm_90", "", "-default-device"}, std::string("a\0b", 3)};
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string bytes = EncodeHelperRequest(sent) + "ATNX";  // then a malformed one
  ASSERT_TRUE(WriteFully(fds[1], bytes.data(), bytes.size()));
  close(fds[1]);
  HelperRequest got;
  ASSERT_TRUE(ReadHelperRequest(fds[0], &got));
  EXPECT_DOUBLE_EQ(got.cpu_limit_s, 2.5);
  EXPECT_EQ(got.options, sent.options);
  EXPECT_EQ(got.source, sent.source);
  EXPECT_FALSE(ReadHelperRequest(fds[0], &got));
  close(fds[0]);
}

// Helpers stay for the compiles that follow: one for compiles one after another, at most one per
// compile running at once; a helper that died between compiles is replaced without failing one.
TEST_F(CudaBuild, HelpersStayForManyCompiles) {
  const std::string helper = HelperUnderTest();
  const std::vector<std::string> options = NvrtcOptions("sm_90", Config());
  auto compile = [&](NvrtcHelperPool& pool, const std::string& source) {
    HelperCompile c = pool.Compile(HelperRequest{60, options, source}, 240);
    EXPECT_TRUE(c.process.ok()) << c.process.output;
    EXPECT_GT(c.process.cpu_seconds, 0);
    return c.answer;
  };
  NvrtcHelperPool pool(helper, kCompileNice);
  const std::string first = compile(pool, kAddSource);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first[0], 'o');  // EncodeNvrtcOutput's status byte of a cubin
  EXPECT_EQ(compile(pool, "extern \"C\" __global__ void k() { x; }\n")[0], 'e');  // a compile error
  EXPECT_EQ(compile(pool, kAddSource)[0], 'o');
  EXPECT_EQ(pool.Started(), 1);

  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back([&] { EXPECT_EQ(compile(pool, kAddSource)[0], 'o'); });
  for (auto& t : threads) t.join();
  EXPECT_LE(pool.Started(), 3);

  // Kill every helper there is now: this process's children running the helper executable.
  const int before = pool.Started();
  int killed = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream stat(e.path() / "stat");
    std::string pid, comm, state;
    pid_t ppid = 0;
    if (!(stat >> pid >> comm >> state >> ppid) || ppid != getpid()) continue;
    if (fs::read_symlink(e.path() / "exe").filename() != fs::path(helper).filename()) continue;
    killed += kill(std::stoi(pid), SIGKILL) == 0;
  }
  EXPECT_GT(killed, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(compile(pool, kAddSource)[0], 'o');
  EXPECT_EQ(pool.Started(), before + 1);
}

TEST_F(CudaBuild, SourceWithoutLaunchesIsBuildError) {
  NvrtcBuilder builder(Config());
  auto results = builder.Build({BuildInput::FromSource(kAddSource, "vadd", 3)});
  EXPECT_EQ(results[0].error_kind, ErrorKind::kBuildError);
  EXPECT_NE(results[0].error_message.find("FromCudaModule"), std::string::npos) << results[0].error_message;
}

TEST_F(CudaBuild, UnknownArchitectureIsBuildError) {
  MeasureConfig c = Config();
  c.cuda_arch = "gfx90a";
  NvrtcBuilder builder(c);
  auto results = builder.Build({CudaSource(kAddSource, "vadd")});
  EXPECT_EQ(results[0].error_kind, ErrorKind::kBuildError);
  EXPECT_NE(results[0].error_message.find("bad CUDA architecture"), std::string::npos) << results[0].error_message;
}

TEST_F(CudaBuild, CubinsAreCachedWithTheirPtxasReport) {
  MeasureConfig c = Config("cached");
  NvrtcBuilder builder(c);
  const std::string other = std::string(kAddSource) + "// another source\n";
  auto first = builder.Build({CudaSource(kAddSource, "vadd"), CudaSource(other, "vadd")});
  ASSERT_TRUE(first[0].ok() && first[1].ok());
  EXPECT_FALSE(first[0].cached);
  EXPECT_NE(first[0].artifact, first[1].artifact);
  EXPECT_EQ(fs::path(first[0].artifact).stem().string().size(), 64u);  // SHA-256 hex

  NvrtcBuilder again_builder(c);  // a new builder (a new process would do the same) finds it
  auto again = again_builder.Build({CudaSource(kAddSource, "vadd")});
  ASSERT_TRUE(again[0].ok());
  EXPECT_TRUE(again[0].cached);
  EXPECT_EQ(again[0].artifact, first[0].artifact);
  EXPECT_EQ(again[0].registers, first[0].registers);
  EXPECT_EQ(again[0].binary_bytes, first[0].binary_bytes);
  EXPECT_EQ(again[0].kernels.size(), 1u);

  // Other options, other key.
  MeasureConfig lineinfo = c;
  lineinfo.cuda_lineinfo = true;
  auto with_lineinfo = NvrtcBuilder(lineinfo).Build({CudaSource(kAddSource, "vadd")});
  ASSERT_TRUE(with_lineinfo[0].ok());
  EXPECT_FALSE(with_lineinfo[0].cached);
  EXPECT_NE(with_lineinfo[0].artifact, first[0].artifact);
  for (const auto& e : fs::directory_iterator(c.cache_dir)) {
    EXPECT_NE(e.path().filename().string()[0], '.') << "temporary file left: " << e.path();
  }
}

TEST_F(CudaBuild, CompilerPastTheTimeLimitIsBuildTimeout) {
  MeasureConfig c = Config("timeout");  // nothing cached: NVRTC must run
  c.build_timeout_s = 0.001;
  auto results = NvrtcBuilder(c).Build({CudaSource(kAddSource, "vadd")});
  EXPECT_EQ(results[0].error_kind, ErrorKind::kBuildTimeout) << results[0].error_message;

  // A compile that really takes long (about 20 s here): 400 inlined sinf steps.
  const std::string slow = R"(template <int N> struct G {
  static __device__ __forceinline__ float f(float x, const float* B) { return G<N - N / 2>::f(G<N / 2>::f(x, B), B + 1); }
};
template <> struct G<1> {
  static __device__ __forceinline__ float f(float x, const float* B) { return sinf(x) * B[0] + 1.0f; }
};
extern "C" __global__ void slow(float* A, float* B, float* C) { C[threadIdx.x] = G<400>::f(A[threadIdx.x], B); }
)";
  c.build_timeout_s = 1;
  const auto t0 = std::chrono::steady_clock::now();
  results = NvrtcBuilder(c).Build({CudaSource(slow, "slow")});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(results[0].error_kind, ErrorKind::kBuildTimeout) << results[0].error_message;
  EXPECT_LT(seconds, 30);  // killed, not waited for (a generous bound: not a timing assertion)
}

TEST_F(CudaBuild, ModuleOfSeveralKernelsWithWorkspacesAndDynamicSharedMemory) {
  tir::CudaModule m;
  m.code = R"(extern "C" __global__ void first(float* A, float* B, float* C, float* W) {
  extern __shared__ float tile[];
  tile[threadIdx.x] = A[threadIdx.x];
  __syncthreads();
  W[threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}
extern "C" __global__ void second(float* A, float* B, float* C, float* W) { C[threadIdx.x] = W[threadIdx.x] + B[0]; }
)";
  m.kernels = {{"first", {1, 1, 1}, {256, 1, 1}, 64 * 1024}, {"second", {1, 1, 1}, {256, 1, 1}, 0}};
  m.num_params = 3;
  m.workspace_bytes = {1024};
  auto r = NvrtcBuilder(Config()).Build({BuildInput::FromCudaModule(m)});
  ASSERT_TRUE(r[0].ok()) << r[0].error_message;
  ASSERT_EQ(r[0].kernels.size(), 2u);
  EXPECT_EQ(r[0].kernels[0].dynamic_shared_bytes, 64 * 1024);
  EXPECT_EQ(r[0].workspace_bytes, std::vector<int64_t>{1024});
  EXPECT_EQ(r[0].entry, "first");
}

TEST_F(CudaBuild, GeneratedKernelsCompile) {
  auto results = NvrtcBuilder(Config()).Build({BuildInput::FromFunc(GpuTiledGemm(64, 48, 40)),
                                               BuildInput::FromFunc(GpuTiledGemm(32, 32, 32))});
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.error_message << "\n" << r.source;
    EXPECT_FALSE(r.kernels.empty());
    EXPECT_EQ(r.num_params, 3);
    EXPECT_GT(r.registers, 0);
    EXPECT_GT(r.binary_bytes, 0);
  }
}

TEST_F(CudaBuild, ReferenceAndDefaultSchedulesOfRealWorkloadsCompile) {
  // What the CUDA runner builds as the reference (the naive schedule), and the default candidate.
  for (const auto& [op, shape, epilogue] : {std::tuple{"gemm", "M=64,N=128,K=96", ""},
                                            std::tuple{"conv2d", "N=1,C=16,H=14,W=14,K=32,R=3,S=3,pad=1", "bias,relu"}}) {
    auto w = tir::MakeWorkload(op, shape, epilogue);
    ASSERT_TRUE(w) << w.error().message;
    std::vector<BuildInput> inputs;
    for (auto sch : {tir::NaiveGpuSchedule(*w), search::DefaultSchedule(*w, tir::TargetKind::kCuda)}) {
      ASSERT_TRUE(sch) << op << ": " << sch.error().message;
      auto f = tir::Lower(sch->state());
      ASSERT_TRUE(f) << op << ": " << f.error().message;
      inputs.push_back(BuildInput::FromFunc(*f));
    }
    for (const auto& r : NvrtcBuilder(Config()).Build(inputs)) {
      EXPECT_TRUE(r.ok()) << op << ": " << r.error_message << "\n" << r.source;
      EXPECT_EQ(r.num_params, static_cast<int>(w->inputs.size()) + 1);
    }
  }
}

TEST_F(CudaBuild, ProgramBeyondTheGpuLimitsIsInvalidScheduleWithoutCompiling) {
  // 2048 threads in a block; and a 300 KB shared buffer (above the 227 KB of sm_90).
  tir::Buffer A = Flat("A", 4096), B = Flat("B", 4096), C = Flat("C", 4096);
  tir::Var tx = tir::MakeVar("tx");
  tir::PrimFunc wide{"wide", {A, B, C}, ThreadLoop(tx, 2048, tir::ThreadTag::kThreadIdxX, tir::Store(C, F(1), {tx}))};
  tir::Buffer S = Flat("S", 300 * 256, tir::Scope::kShared);
  tir::Var tx2 = tir::MakeVar("tx");
  tir::PrimFunc big_shared{
      "big_shared", {A, B, C},
      tir::Allocate(S, ThreadLoop(tx2, 256, tir::ThreadTag::kThreadIdxX,
                                  tir::Seq({tir::Store(S, tir::Load(A, {tx2}), {tx2}), tir::Barrier(),
                                            tir::Store(C, tir::Load(S, {I(255) - tx2}), {tx2})})))};
  MeasureConfig c = Config("invalid");
  c.build_timeout_s = 0.001;  // NVRTC would time out: it must not run
  auto results = NvrtcBuilder(c).Build({BuildInput::FromFunc(wide), BuildInput::FromFunc(big_shared)});
  EXPECT_EQ(results[0].error_kind, ErrorKind::kInvalidSchedule) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("2048 threads per block"), std::string::npos) << results[0].error_message;
  EXPECT_EQ(results[1].error_kind, ErrorKind::kInvalidSchedule) << results[1].error_message;
  EXPECT_NE(results[1].error_message.find("shared"), std::string::npos) << results[1].error_message;
}

TEST_F(CudaBuild, SharedMemoryLimitIsThatOfTheArchitecture) {
  // 120 KB of shared memory: fits sm_90 (227 KB, dynamic shared memory), not sm_86 (99 KB).
  tir::Buffer A = Flat("A", 4096), B = Flat("B", 4096), C = Flat("C", 4096);
  tir::Buffer S = Flat("S", 120 * 256, tir::Scope::kShared);
  tir::Var tx = tir::MakeVar("tx");
  tir::PrimFunc f{"shared120", {A, B, C},
                  tir::Allocate(S, ThreadLoop(tx, 256, tir::ThreadTag::kThreadIdxX,
                                              tir::Seq({tir::Store(S, tir::Load(A, {tx}), {tx * 120}), tir::Barrier(),
                                                        tir::Store(C, tir::Load(S, {(I(255) - tx) * 120}), {tx})})))};
  auto sm90 = NvrtcBuilder(Config()).Build({BuildInput::FromFunc(f)});
  ASSERT_TRUE(sm90[0].ok()) << sm90[0].error_message;
  EXPECT_GT(sm90[0].kernels[0].dynamic_shared_bytes, 48 * 1024);
  MeasureConfig c = Config();
  c.cuda_arch = "sm_86";
  auto sm86 = NvrtcBuilder(c).Build({BuildInput::FromFunc(f)});
  EXPECT_EQ(sm86[0].error_kind, ErrorKind::kInvalidSchedule) << sm86[0].error_message;
}

TEST_F(CudaBuild, BarrierUnderADivergentBranchIsRejected) {
  // CheckGpuValidity checks resources, not barrier placement; codegen refuses it (BUILD_ERROR).
  tir::Buffer A = Flat("A", 64), B = Flat("B", 64), C = Flat("C", 64), S = Flat("S", 4, tir::Scope::kShared);
  tir::Var tx = tir::MakeVar("tx");
  tir::Stmt body = tir::Allocate(
      S, ThreadLoop(tx, 4, tir::ThreadTag::kThreadIdxX,
                    tir::IfThenElse(tir::LT(tx, I(2)), tir::Seq({tir::Store(S, F(1), {tx}), tir::Barrier()}))));
  auto results = NvrtcBuilder(Config()).Build({BuildInput::FromFunc(tir::PrimFunc{"bad", {A, B, C}, body})});
  EXPECT_FALSE(results[0].ok());
  EXPECT_NE(results[0].error_message.find("barrier"), std::string::npos) << results[0].error_message;
}

// ---- pieces that need neither NVRTC nor a GPU ------------------------------------------------------

TEST(PtxasInfo, ParsesEveryKernelOfNewAndOldLogs) {
  const std::string log = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k2' for 'sm_90'
ptxas info    : Function properties for k2
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 1 barriers, 128 bytes smem
ptxas info    : Compile time = 2.449 ms
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
ptxas         .     264 bytes stack frame, 24 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 264 bytes cumulative stack size
)";
  PtxasInfo p = ParsePtxasInfo(log);
  EXPECT_EQ(p.kernels, 2);
  EXPECT_EQ(p.registers, 255);
  EXPECT_EQ(p.spill_store_bytes, 24);
  EXPECT_EQ(p.spill_load_bytes, 16);
  EXPECT_EQ(p.stack_frame_bytes, 264);

  const std::string old_log = R"(ptxas info    : Compiling entry function 'k' for 'sm_80'
ptxas info    : Function properties for k
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 32 registers, 380 bytes cmem[0]
)";
  p = ParsePtxasInfo(old_log);
  EXPECT_EQ(p.kernels, 1);
  EXPECT_EQ(p.registers, 32);
  EXPECT_EQ(p.spill_store_bytes + p.spill_load_bytes, 8);
  EXPECT_EQ(ParsePtxasInfo("").registers, 0);
}

TEST(CudaArch, Normalized) {
  EXPECT_EQ(*NormalizeCudaArch("sm_90"), "sm_90");
  EXPECT_EQ(*NormalizeCudaArch("90"), "sm_90");
  EXPECT_EQ(*NormalizeCudaArch("sm_90a"), "sm_90a");
  EXPECT_EQ(*NormalizeCudaArch("100"), "sm_100");
  EXPECT_FALSE(NormalizeCudaArch(""));
  EXPECT_FALSE(NormalizeCudaArch("sm_"));
  EXPECT_FALSE(NormalizeCudaArch("compute_90"));
  EXPECT_FALSE(NormalizeCudaArch("sm_90; rm -rf"));
}

TEST(CudaDriver, MissingLibraryIsACleanError) {
  auto d = LoadCudaDriverFrom("/nonexistent/libcuda.so.1");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().message, "no CUDA driver (/nonexistent/libcuda.so.1) on this machine");
  auto real = LoadCudaDriver();
  if (real) GTEST_SKIP() << "this machine has a CUDA driver";
  EXPECT_EQ(real.error().message, "no CUDA driver (libcuda.so.1) on this machine");
  auto again = LoadCudaDriver();  // the same answer, once loaded
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message, real.error().message);
}

// The toolkit's stub libcuda exports every entry point of the driver API: ours must all be there,
// the optional graph ones (MeasureConfig::cuda_graph) included, under the names we look up.
TEST(CudaDriver, EveryEntryPointResolvesAgainstTheToolkitsStub) {
  if (!std::filesystem::exists(AUTOTUNE_CUDA_STUB_DRIVER)) GTEST_SKIP() << "no CUDA toolkit stub driver here";
  auto d = LoadCudaDriverFrom(AUTOTUNE_CUDA_STUB_DRIVER);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_TRUE(d->HasGraphs());
  EXPECT_NE(d->LaunchKernel, nullptr);
}

TEST(CudaDriver, DeviceQueryWithoutDriverSaysSo) {
  if (LoadCudaDriver()) GTEST_SKIP() << "this machine has a CUDA driver";
  auto info = QueryCudaDeviceIsolated(0, 30);
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().message, "no CUDA driver (libcuda.so.1) on this machine");
}

TEST(CudaDriver, DeviceInfoRoundTripsThroughJson) {
  CudaDeviceInfo i;
  i.name = "NVIDIA H200";
  i.cc_major = 9;
  i.sm_count = 132;
  i.l2_bytes = 60 << 20;
  i.memory_bytes = int64_t{141} << 30;
  i.driver_version = 13000;
  auto back = CudaDeviceInfoFromJson(CudaDeviceInfoToJson(i));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->Arch(), "sm_90");
  EXPECT_EQ(back->memory_bytes, i.memory_bytes);
  EXPECT_EQ(back->Describe(), "NVIDIA H200 (sm_90, 132 SMs, 60 MiB L2, 141 GiB, driver 13.0)");
  EXPECT_FALSE(CudaDeviceInfoFromJson("not json"));
}

TEST(NvrtcBuilderWithoutGpu, NoArchitectureSaysPassArch) {
  if (LoadCudaDriver()) GTEST_SKIP() << "this machine has a CUDA driver";
  if (!LoadNvrtc()) GTEST_SKIP() << "no NVRTC";
  MeasureConfig c;
  c.cache_dir = (fs::temp_directory_path() / fmt::format("cuda_measure_test-noarch-{}", getpid())).string();
  auto results = NvrtcBuilder(c).Build({CudaSource(kAddSource, "vadd")});
  fs::remove_all(c.cache_dir);
  EXPECT_EQ(results[0].error_kind, ErrorKind::kBuildError);
  EXPECT_NE(results[0].error_message.find("no CUDA driver"), std::string::npos) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("--arch"), std::string::npos) << results[0].error_message;
}

TEST(CudaRunnerWithoutGpu, EveryCandidateSaysThereIsNoDriver) {
  if (LoadCudaDriver()) GTEST_SKIP() << "this machine has a CUDA driver";
  BuildResult built;
  built.artifact = "/nonexistent.cubin";
  built.kernels = {tir::CudaKernelLaunch{"k", {1, 1, 1}, {1, 1, 1}, 0}};
  built.num_params = 3;
  built.build_seconds = 0.5;
  BuildResult failed;
  failed.error_kind = ErrorKind::kBuildError;
  failed.error_message = "NVRTC compile error";
  MeasureConfig c;
  CudaRunner runner(c);
  auto results = runner.Run(GemmWorkload(8, 8, 8), {built, failed, built});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].error_kind, ErrorKind::kRunError);
  EXPECT_EQ(results[0].error_message, "no CUDA driver (libcuda.so.1) on this machine");
  EXPECT_EQ(results[0].build_seconds, 0.5);
  EXPECT_EQ(results[1].error_kind, ErrorKind::kBuildError);  // build failures pass through
  EXPECT_EQ(results[2].error_kind, ErrorKind::kRunError);
  EXPECT_FALSE(runner.Device());
}

TEST(CudaRunnerWithoutGpu, WrongBuildsAreRunErrorsBeforeAnyGpuWork) {
  CudaRunner runner(MeasureConfig{});
  BuildResult cpu_build;  // a cpu build: no kernels to launch
  cpu_build.artifact = "/x.so";
  cpu_build.num_params = 3;
  BuildResult two_params;
  two_params.kernels = {tir::CudaKernelLaunch{"k", {1, 1, 1}, {1, 1, 1}, 0}};
  two_params.num_params = 2;
  auto results = runner.Run(GemmWorkload(8, 8, 8), {cpu_build, two_params});
  EXPECT_EQ(results[0].error_kind, ErrorKind::kRunError);
  EXPECT_NE(results[0].error_message.find("no kernels"), std::string::npos);
  EXPECT_EQ(results[1].error_kind, ErrorKind::kRunError);
  EXPECT_NE(results[1].error_message.find("takes 2 buffers"), std::string::npos);
  EXPECT_EQ(runner.ExecutorStarts(), 0);
}

TEST(RunForked, OutputExitCrashAndTimeLimit) {
  ProcessResult ok = RunForked([](int fd) { WriteFully(fd, "hello", 5); }, 10);
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.output, "hello");
  ProcessResult crash = RunForked([](int) { std::raise(SIGSEGV); }, 10);
  EXPECT_EQ(crash.term_signal, SIGSEGV);
  EXPECT_NE(DescribeSignal(crash.term_signal).find("SIGSEGV"), std::string::npos);
  ProcessResult hang = RunForked([](int) { for (;;) pause(); }, 0.2);
  EXPECT_TRUE(hang.timed_out);
  ProcessResult big = RunForked(
      [](int fd) {
        const std::string s(1 << 20, 'x');
        WriteFully(fd, s.data(), s.size());
      },
      10, 1000);
  EXPECT_TRUE(big.ok());  // not blocked by the parent dropping the rest
  EXPECT_EQ(big.output.size(), 1000u);
}

// ReapBy: a child that ends in time is reaped with its status (with or without a result to fill);
// one still running at the deadline is killed and marked timed out; one already marked timed out is
// killed at once; a pid that is no child of ours (any more) gives no status, at once.
TEST(ReapBy, StatusDeadlineAndNoChild) {
  using Clock = std::chrono::steady_clock;
  const auto start_child = [](int code, bool hang) {
    const pid_t pid = fork();
    if (pid == 0) {
      if (hang) for (;;) pause();
      _exit(code);
    }
    return pid;
  };
  ProcessResult ended;
  const pid_t quick = start_child(7, false);
  auto status = ReapBy(quick, quick, DeadlineAfter(Clock::now(), 10), &ended);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(ended.exit_code, 7);
  EXPECT_FALSE(ended.timed_out);
  EXPECT_EQ(DescribeWaitStatus(*status), "exit code 7");

  const pid_t unasked = start_child(3, false);  // no result asked for: the status alone
  status = ReapBy(unasked, unasked, DeadlineAfter(Clock::now(), 10));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(DescribeWaitStatus(*status), "exit code 3");

  ProcessResult late;
  pid_t pid = start_child(0, true);
  const auto t0 = Clock::now();
  status = ReapBy(pid, pid, DeadlineAfter(t0, 0.2), &late);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(late.timed_out);
  EXPECT_EQ(late.term_signal, SIGKILL);
  EXPECT_EQ(DescribeWaitStatus(*status).rfind("signal 9 (SIGKILL", 0), 0u) << DescribeWaitStatus(*status);
  EXPECT_GE(SecondsSince(t0), 0.19);
  EXPECT_LT(SecondsSince(t0), 5);

  ProcessResult marked;
  marked.timed_out = true;
  pid = start_child(0, true);
  const auto t1 = Clock::now();
  ReapBy(pid, pid, DeadlineAfter(t1, 30), &marked);
  EXPECT_EQ(marked.term_signal, SIGKILL);
  EXPECT_LT(SecondsSince(t1), 5);

  ProcessResult none;  // `quick`, reaped above, is no child any more
  EXPECT_FALSE(ReapBy(quick, quick, DeadlineAfter(Clock::now(), 10), &none).has_value());
  EXPECT_FALSE(none.timed_out);
}

// A child that computes is stopped by its CPU limit long before the wall limit, and one that sleeps
// is not (the limit a compile gets: its work, whatever the machine's load). The child runs at the
// nice value asked for, and its CPU time is reported.
TEST(RunForked, CpuLimitNiceAndCpuTime) {
  ForkLimits limits;
  limits.wall_s = 60;
  limits.cpu_s = 1;
  limits.nice = 5;
  const int parent_nice = getpriority(PRIO_PROCESS, 0);
  ProcessResult spin = RunForked(
      [](int fd) {
        const int nice = getpriority(PRIO_PROCESS, 0);
        WriteFully(fd, &nice, sizeof nice);
        volatile uint64_t spins = 0;
        for (;;) spins = spins + 1;
      },
      limits);
  EXPECT_TRUE(spin.timed_out);
  EXPECT_EQ(spin.term_signal, 0);
  EXPECT_GE(spin.cpu_seconds, 0.9);
  EXPECT_LT(spin.seconds, 30);
  ASSERT_EQ(spin.output.size(), sizeof(int));
  int child_nice = 0;
  std::memcpy(&child_nice, spin.output.data(), sizeof child_nice);
  EXPECT_EQ(child_nice, std::min(19, parent_nice + 5));

  limits.wall_s = 0.5;
  ProcessResult sleeper = RunForked([](int) { for (;;) pause(); }, limits);
  EXPECT_TRUE(sleeper.timed_out);  // by the wall limit
  EXPECT_LT(sleeper.cpu_seconds, 0.5);

  limits.wall_s = 60;
  ProcessResult quick = RunForked([](int fd) { WriteFully(fd, "ok", 2); }, limits);
  EXPECT_TRUE(quick.ok());
  EXPECT_EQ(quick.output, "ok");
}

}  // namespace
}  // namespace autotune::measure
