// `autotune measure --target cuda --save-io DIR` on a GPU (ctest label gpu): the output written by
// the CUDA executor and the inputs written by the command decode and agree. Skips itself where there
// is no CUDA driver, device or NVRTC.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "measure/cuda_driver.h"
#include "measure/nvrtc_compiler.h"
#include "tests/cli/run_cli.h"
#include "tests/cli/save_io_check.h"

namespace {

namespace fs = std::filesystem;
namespace measure = autotune::measure;
using autotune::testing::CheckGemmIo;
using autotune::testing::RunCli;
using autotune::testing::SaveIoDir;

TEST(SaveIoGpu, CudaGemmInputsAndOutputDecodeAndMatch) {
  if (auto nvrtc = measure::LoadNvrtc(); !nvrtc) GTEST_SKIP() << nvrtc.error().message;
  if (auto device = measure::QueryCudaDeviceIsolated(0); !device) GTEST_SKIP() << device.error().message;
  const fs::path dir = SaveIoDir("cuda_gemm");
  auto r = RunCli("measure --op gemm --shape M=64,N=48,K=40 --target cuda --repeats 1 --min-repeat-ms 0 --save-io " +
                  dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  CheckGemmIo(dir, 64, 48, 40, false);
  fs::remove_all(dir);
}

}  // namespace
