// `autotune measure --save-io DIR` on the cpu target: the inputs and the candidate's output come
// back as .npy files that decode to the workload's tensors, and the output is the matmul of the
// inputs (computed in the test, in double).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

// Two outputs: the residual sum is saved beside the output, named in io.json, and is X + R.
TEST(SaveIo, CpuAddRmsNormSavesBothOutputs) {
  const fs::path dir = SaveIoDir("add_rms_norm");
  auto r = RunCli("measure --op add_rms_norm --shape M=3,N=20 --target cpu --repeats 1 --min-repeat-ms 0 --save-io " +
                  dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(dir / "io.json");
  const json io = json::parse(in);
  std::vector<std::string> outputs;
  for (const auto& t : io["tensors"]) {
    if (t["role"] == "output") outputs.push_back(t["file"].get<std::string>() + ":" + t["name"].get<std::string>());
  }
  EXPECT_EQ(outputs, (std::vector<std::string>{"output_sum.npy:sum", "output.npy:Y"}));
  auto x = autotune::measure::ReadNpy((dir / "input0.npy").string());
  auto res = autotune::measure::ReadNpy((dir / "input1.npy").string());
  auto sum = autotune::measure::ReadNpy((dir / "output_sum.npy").string());
  ASSERT_TRUE(x && res && sum);
  ASSERT_EQ(sum->shape, (std::vector<int64_t>{3, 20}));
  for (size_t i = 0; i < sum->data.size(); ++i) EXPECT_EQ(sum->data[i], x->data[i] + res->data[i]) << i;
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
