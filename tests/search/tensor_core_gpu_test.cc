// On a GPU: tensor-core schedules of 16-bit and TF32 matrix products and convolutions, built by NVRTC and run by the Driver API
// runner, give the reference's answer (at the 16-bit types' tolerance). Skips without a GPU.
#include <gtest/gtest.h>

#include "measure/cuda_driver.h"
#include "measure/cuda_runner.h"
#include "measure/nvrtc_builder.h"
#include "tests/search/tensor_core_cases.h"

namespace autotune::search {
namespace {

TEST(TensorCoreGpu, SchedulesGiveTheReferenceAnswer) {
  auto device = measure::QueryCudaDeviceIsolated(0);
  if (!device) GTEST_SKIP() << device.error().message;
  measure::MeasureConfig config = CorrectnessConfig();
  config.run_timeout_s = 20;
  std::vector<Case> cases = Cases();
  cases.push_back({"gemm", "M=512,N=256,K=128", "", "float16", TensorCoreTiling{2, 2, 4, 4, 2}});
  cases.push_back({"gemm", "M=256,N=256,K=512", "", "float16", TensorCoreTiling{2, 4, 4, 4, 2, 4}});
  cases.push_back({"gemm", "M=200,N=136,K=300", "bias,relu", "bfloat16", TensorCoreTiling{2, 2, 2, 2, 2, 3}});
  cases.push_back({"batch_matmul", "B=4,M=128,N=128,K=64", "", "bfloat16", TensorCoreTiling{2, 2, 2, 4, 4}});
  cases.push_back({"gemm", "M=512,N=256,K=256", "", "tf32", TensorCoreTiling{2, 2, 4, 4, 4, 3}});
  cases.push_back({"gemm", "M=256,N=256,K=512", "bias", "3xtf32", TensorCoreTiling{2, 4, 4, 4, 2, 2}});
  cases.push_back({"conv2d", "N=4,C=64,H=28,W=28,K=64,R=3,S=3,pad=1", "bias,relu", "float16", TensorCoreTiling{2, 2, 2, 4, 2, 3}});
  cases.push_back({"conv2d", "N=2,C=32,H=15,W=15,K=48,R=3,S=3,stride=2,pad=1", "", "bfloat16", TensorCoreTiling{1, 2, 1, 4, 1, 2}});
  auto builder = measure::MakeNvrtcBuilder(config);
  auto runner = measure::MakeCudaRunner(config);
  for (const Case& c : cases) ExpectCorrect(c, *builder, *runner);
}

}  // namespace
}  // namespace autotune::search
