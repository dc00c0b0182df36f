// `autotune measure --save-io DIR` on the cpu target: the inputs and the candidate's output come
// back as .npy files that decode to the workload's tensors, and the output is the matmul of the
// inputs (computed in the test, in double).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_cli.h"
#include "tests/cli/save_io_check.h"

namespace {

namespace fs = std::filesystem;
using autotune::testing::CheckGemmIo;
using autotune::testing::Lines;
using autotune::testing::RunCli;
using autotune::testing::SaveIoDir;
using nlohmann::json;

TEST(SaveIo, CpuGemmInputsAndOutputDecodeAndMatch) {
  const fs::path dir = SaveIoDir("gemm");
  const fs::path report = SaveIoDir("gemm.json");
  auto r = RunCli("measure --op gemm --shape M=8,N=8,K=8 --target cpu --repeats 1 --min-repeat-ms 0 --save-io " +
                  dir.string() + " --json " + report.string());
  ASSERT_EQ(r.status, 0) << r.err;
  CheckGemmIo(dir, 8, 8, 8, false);
  std::ifstream in(report);
  EXPECT_EQ(json::parse(in)["save_io"], fs::absolute(dir).string());
  fs::remove_all(dir);
  fs::remove(report);
}

TEST(SaveIo, CpuEpilogueInputsInWorkloadOrder) {
  const fs::path dir = SaveIoDir("gemm_bias_relu");
  auto r = RunCli("measure --op gemm --shape M=5,N=7,K=9 --epilogue bias,relu --target cpu --repeats 1 "
                  "--min-repeat-ms 0 --save-io " + dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  CheckGemmIo(dir, 5, 7, 9, true);
  // Saving again over it replaces every file.
  r = RunCli("measure --op gemm --shape M=5,N=7,K=9 --epilogue bias,relu --target cpu --repeats 1 "
             "--min-repeat-ms 0 --seed 2 --save-io " + dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  CheckGemmIo(dir, 5, 7, 9, true);
  fs::remove_all(dir);
}

TEST(SaveIo, UnwritableDirectoryIsOneLine) {
  const fs::path file = SaveIoDir("plain_file");
  std::ofstream(file) << "x";
  auto r = RunCli("measure --op gemm --shape M=4,N=4,K=4 --target cpu --save-io " + (file / "sub").string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cannot create the directory"), std::string::npos) << r.err;
  fs::remove(file);
}

}  // namespace
