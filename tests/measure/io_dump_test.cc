// The .npy writer and reader of measure/io_dump.h: exact bytes of the header (what numpy.load
// expects), round trips of every rank, and the inputs saved for a workload being the runners' data.
#include "measure/io_dump.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "measure/workload_data.h"
#include "support/half.h"
#include "tir/ops/operator.h"

namespace autotune::measure {
namespace {

namespace fs = std::filesystem;

class IoDump : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("io_dump_test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::string ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST_F(IoDump, HeaderIsNpyVersion1AlignedTo64) {
  const float v[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(WriteNpy(Path("a.npy"), v, 6, {2, 3}));
  const std::string b = ReadBytes(Path("a.npy"));
  ASSERT_EQ(b.size(), 128u + 24u);  // a 71-byte header padded to 128 - 10
  EXPECT_EQ(b.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(b[6], 1);
  EXPECT_EQ(b[7], 0);
  const size_t len = static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8);
  EXPECT_EQ(10 + len, 128u);
  const std::string header = b.substr(10, len);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u) << header;
  EXPECT_EQ(header.back(), '\n');
}

TEST_F(IoDump, RoundTripsEveryRank) {
  std::vector<float> data(2 * 3 * 4 * 5);
  for (size_t i = 0; i < data.size(); ++i) data[i] = 0.25f * static_cast<float>(i) - 3;
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{120}, {10, 12}, {2, 3, 20}, {2, 3, 4, 5}}) {
    ASSERT_TRUE(WriteNpy(Path("r.npy"), data.data(), 120, shape));
    auto a = ReadNpy(Path("r.npy"));
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_EQ(a->shape, shape);
    EXPECT_EQ(a->data, data);
  }
  ASSERT_TRUE(WriteNpy(Path("flat.npy"), data.data(), 7, {}));  // no shape: 1-D
  auto flat = ReadNpy(Path("flat.npy"));
  ASSERT_TRUE(flat);
  EXPECT_EQ(flat->shape, std::vector<int64_t>{7});
  EXPECT_NE(ReadBytes(Path("flat.npy")).find("'shape': (7,)"), std::string::npos);
}

TEST_F(IoDump, RefusesWrongShapesAndFiles) {
  const float v[4] = {};
  EXPECT_FALSE(WriteNpy(Path("x.npy"), v, 4, {3}));
  EXPECT_FALSE(WriteNpy((dir_ / "no" / "such" / "dir.npy").string(), v, 4, {4}));
  EXPECT_FALSE(ReadNpy(Path("missing.npy")));
  std::ofstream(Path("junk.npy")) << "not numpy";
  auto junk = ReadNpy(Path("junk.npy"));
  ASSERT_FALSE(junk);
  EXPECT_NE(junk.error().message.find("not a float32 .npy"), std::string::npos);
  ASSERT_TRUE(WriteNpy(Path("t.npy"), v, 4, {4}));
  std::string b = ReadBytes(Path("t.npy"));
  std::ofstream(Path("t.npy"), std::ios::binary | std::ios::trunc) << b.substr(0, b.size() - 4);  // truncated
  EXPECT_FALSE(ReadNpy(Path("t.npy")));
}

TEST_F(IoDump, SavedInputsAreTheRunnersDataWithTheirShapes) {
  auto w = tir::MakeWorkload("gemm", "M=3,N=5,K=4", "bias");
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_TRUE(SaveInputs(*w, 7, (dir_ / "io").string()));
  const auto expect = MakeRandomInputs({12, 20, 5}, 7);
  const std::vector<std::vector<int64_t>> shapes = {{3, 4}, {4, 5}, {5}};
  for (size_t i = 0; i < 3; ++i) {
    auto a = ReadNpy((dir_ / "io" / SavedInputFile(i)).string());
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_EQ(a->shape, shapes[i]);
    EXPECT_EQ(a->data, std::vector<float>(expect[i].data(), expect[i].data() + expect[i].size()));
  }
  const auto m = IoManifest(*w, 7, true);
  EXPECT_EQ(m["format"], "autotune-io-1");
  EXPECT_EQ(m["seed"], 7);
  EXPECT_EQ(m["shape"]["K"], 4);
  ASSERT_EQ(m["tensors"].size(), 4u);
  EXPECT_EQ(m["tensors"][2]["name"], "bias");
  EXPECT_EQ(m["tensors"][3]["role"], "output");
  EXPECT_EQ(m["tensors"][3]["file"], "output.npy");
  EXPECT_EQ(m["tensors"][3]["shape"], nlohmann::json({3, 5}));
  EXPECT_DOUBLE_EQ(m["flops"].get<double>(), 2.0 * 3 * 5 * 4 + 15);
  EXPECT_EQ(IoManifest(*w, 7, false)["tensors"].size(), 3u);
  EXPECT_EQ(m["dtype"], "float32");
}

TEST_F(IoDump, SixteenBitInputsAreSavedRoundedToTheirType) {
  auto w = tir::MakeWorkload("gemm", "M=8,N=8,K=16", "bias", "bfloat16");
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_TRUE(SaveInputs(*w, 3, (dir_ / "io").string()));
  auto data = WorkloadDataCache().Get(*w, 3);  // the runners' (rounded) inputs
  for (size_t i = 0; i < 3; ++i) {
    auto a = ReadNpy((dir_ / "io" / SavedInputFile(i)).string());
    ASSERT_TRUE(a) << a.error().message;
    const AlignedFloats& expect = data->inputs[i];
    EXPECT_EQ(a->data, std::vector<float>(expect.data(), expect.data() + expect.size()));
    for (float v : a->data) EXPECT_EQ(BFloat16BitsToFloat(FloatToBFloat16Bits(v)), v);
  }
  const auto m = IoManifest(*w, 3, true);
  EXPECT_EQ(m["dtype"], "bfloat16");
  EXPECT_EQ(m["tensors"][0]["dtype"], "bfloat16");
  EXPECT_EQ(m["tensors"][3]["dtype"], "bfloat16");
}

}  // namespace
}  // namespace autotune::measure
