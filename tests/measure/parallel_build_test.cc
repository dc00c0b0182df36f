#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "measure/parallel_build.h"
#include "tir/buffer.h"
#include "tir/stmt.h"

namespace autotune::measure {
namespace {

// A function whose body is a store in an unrolled loop of `extent` (unrolled size `extent`), named
// after its extent.
BuildInput Unrolled(int64_t extent) {
  tir::Buffer a = tir::MakeBuffer("A", tir::DType::kFloat32, {tir::IntImm(4096)});
  tir::Var i = tir::MakeVar("i");
  tir::PrimFunc f;
  f.name = "f" + std::to_string(extent);
  f.params = {a};
  f.body = tir::For(i, tir::IntImm(0), tir::IntImm(extent), tir::ForKind::kUnrolled,
                    tir::Store(a, tir::FloatImm(1.0), {i}));
  return BuildInput::FromFunc(f);
}

TEST(ParallelBuild, LargestFirstThenInputOrder) {
  const std::vector<BuildInput> inputs = {Unrolled(4), BuildInput::FromSource("src", "k", 1), Unrolled(64),
                                          Unrolled(4), Unrolled(16)};
  EXPECT_EQ(LargestFirst(inputs), (std::vector<size_t>{2, 4, 0, 3, 1}));
}

TEST(ParallelBuild, ResultsInInputOrderWhateverTheStartOrder) {
  const std::vector<BuildInput> inputs = {Unrolled(2), Unrolled(32), Unrolled(8)};
  std::mutex mu;
  std::vector<std::string> started;
  auto build = [&](const BuildInput& in) {
    {
      std::lock_guard<std::mutex> lock(mu);
      started.push_back(in.func.name);
    }
    BuildResult r;
    r.entry = in.func.name;
    return r;
  };
  auto one_thread = BuildInParallel(inputs, 1, build);
  EXPECT_EQ(started, (std::vector<std::string>{"f32", "f8", "f2"}));
  for (int threads : {1, 2, 8}) {
    auto results = threads == 1 ? one_thread : BuildInParallel(inputs, threads, build);
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(results[0].entry, "f2");
    EXPECT_EQ(results[1].entry, "f32");
    EXPECT_EQ(results[2].entry, "f8");
  }
  EXPECT_TRUE(BuildInParallel({}, 4, build).empty());
}

}  // namespace
}  // namespace autotune::measure
