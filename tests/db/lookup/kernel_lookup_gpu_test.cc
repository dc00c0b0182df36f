// Kernels the lookup hands out for the cuda target, exact and approximate, compiled with NVRTC and
// run on the GPU against the reference: what another compiler would get must be correct.
#include <gtest/gtest.h>

#include <filesystem>

#include "db/lookup/kernel_lookup.h"
#include "measure/cuda_runner.h"
#include "measure/nvrtc_builder.h"
#include "tests/db/lookup/lookup_fixture.h"
#include "tir/ops/operator.h"

namespace autotune::db {
namespace {

namespace fs = std::filesystem;

TEST(KernelLookupGpu, ExactAndNearestCudaKernelsAreCorrect) {
  auto device = measure::QueryCudaDeviceIsolated(0);
  if (!device) GTEST_SKIP() << device.error().message;
  const fs::path dir = fs::temp_directory_path() / ("kernel_lookup_gpu_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "fixture.db").string();
  ASSERT_TRUE(testing::WriteLookupFixture(path));
  auto lookup = KernelLookup::Open(path);
  ASSERT_TRUE(lookup);

  measure::MeasureConfig config;
  config.warmup = 0;
  config.repeats = 1;
  config.min_repeat_ms = 0;  // correctness only
  config.flush_cache = false;
  auto builder = measure::MakeNvrtcBuilder(config);
  auto runner = measure::MakeCudaRunner(config);
  struct Case {
    const char* op;
    const char* shape;
    bool exact;
  };
  const Case cases[] = {
      {"gemm", "M=256,N=256,K=256", true},
      {"gemm", "M=1024,N=1024,K=1024", true},
      {"conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", true},
      {"gemm", "M=384,N=320,K=200", false},
      {"gemm", "M=2048,N=1000,K=512", false},
      {"conv2d", "N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1", false},
  };
  for (const Case& c : cases) {
    LookupResult r = (*lookup)->Find({c.op, c.shape, "", "cuda:sm_90", !c.exact});
    ASSERT_EQ(r.status, LookupStatus::kOk) << c.shape << ": " << r.message;
    EXPECT_EQ(r.answer->exact, c.exact) << c.shape;
    auto w = tir::MakeWorkload(c.op, c.shape);
    ASSERT_TRUE(w);
    tir::CudaModule module{r.answer->kernel.code, r.answer->kernel.launches, r.answer->kernel.num_params,
                           r.answer->kernel.workspace_bytes};
    auto builds = builder->Build({measure::BuildInput::FromCudaModule(module)});
    ASSERT_TRUE(builds[0].ok()) << c.shape << ": " << builds[0].error_message;
    auto result = runner->Run(*w, builds).at(0);
    EXPECT_TRUE(result.ok() && result.correct)
        << c.shape << ": " << measure::ErrorKindName(result.error_kind) << " " << result.error_message;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace autotune::db
