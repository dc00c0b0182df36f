// What the --save-io tests check: the files `autotune measure --save-io DIR` wrote for a gemm decode
// to the workload's tensors, and the output is the matmul of the inputs (computed here, in double).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "measure/io_dump.h"
#include "tests/temp_path.h"

namespace autotune::testing {

namespace fs = std::filesystem;
using nlohmann::json;

inline fs::path SaveIoDir(const std::string& name) {
  const fs::path p = TestTempPath("autotune_save_io", name);
  fs::remove_all(p);
  return p;
}

inline measure::NpyArray Load(const fs::path& p) {
  auto a = measure::ReadNpy(p.string());
  EXPECT_TRUE(a) << a.error().message;
  return a ? *a : measure::NpyArray{};
}

// out[M,N] = A[M,K] x B[K,N] (+ bias[N], relu): the largest |difference| relative to max |expected|.
inline double GemmError(const measure::NpyArray& a, const measure::NpyArray& b, const measure::NpyArray* bias,
                        bool relu, const measure::NpyArray& out) {
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  double worst = 0, scale = 0;
  std::vector<double> expect(M * N);
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += static_cast<double>(a.data[i * K + k]) * b.data[k * N + j];
      if (bias) acc += bias->data[j];
      if (relu) acc = std::max(acc, 0.0);
      expect[i * N + j] = acc;
      scale = std::max(scale, std::fabs(acc));
    }
  }
  for (size_t i = 0; i < expect.size(); ++i) worst = std::max(worst, std::fabs(expect[i] - out.data[i]));
  return worst / std::max(scale, 1e-30);
}

inline void CheckGemmIo(const fs::path& dir, int64_t M, int64_t N, int64_t K, bool bias_relu) {
  std::ifstream in(dir / "io.json");
  ASSERT_TRUE(in) << "no io.json in " << dir;
  const json io = json::parse(in);
  EXPECT_EQ(io["format"], "autotune-io-1");
  EXPECT_EQ(io["op"], "gemm");
  EXPECT_EQ(io["correct"], true);
  const size_t inputs = bias_relu ? 3 : 2;
  ASSERT_EQ(io["tensors"].size(), inputs + 1);
  for (size_t i = 0; i < inputs; ++i) {
    EXPECT_EQ(io["tensors"][i]["role"], "input");
    EXPECT_EQ(io["tensors"][i]["file"], "input" + std::to_string(i) + ".npy");
  }
  EXPECT_EQ(io["tensors"][inputs]["role"], "output");
  EXPECT_EQ(io["tensors"][inputs]["shape"], json({M, N}));

  const auto a = Load(dir / "input0.npy");
  const auto b = Load(dir / "input1.npy");
  const auto out = Load(dir / "output.npy");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{M, K}));
  EXPECT_EQ(b.shape, (std::vector<int64_t>{K, N}));
  ASSERT_EQ(out.shape, (std::vector<int64_t>{M, N}));
  // Random, not zeros.
  double sum = 0;
  for (float v : a.data) sum += std::fabs(v);
  EXPECT_GT(sum, 0);
  if (bias_relu) {
    const auto bias = Load(dir / "input2.npy");
    ASSERT_EQ(bias.shape, std::vector<int64_t>{N});
    EXPECT_LE(GemmError(a, b, &bias, true, out), 1e-5);
  } else {
    EXPECT_LE(GemmError(a, b, nullptr, false, out), 1e-5);
  }
}

}  // namespace autotune::testing
