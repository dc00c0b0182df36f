// Program features: fixed length and names, exact counts of a schedule small enough to count by
// hand, and the launch structure of the default CUDA gemm schedule.
#include "costmodel/program_features.h"

#include <gtest/gtest.h>

#include <cmath>

#include "search/default_schedule.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/printer.h"
#include "tir/schedule/schedule.h"

namespace autotune::costmodel {
namespace {

tir::PrimFunc LowerOf(const tir::Schedule& sch) {
  auto f = tir::Lower(sch.state());
  EXPECT_TRUE(f) << f.error().message;
  return *f;
}

tir::Workload Make(const std::string& op, const std::string& shape, const std::string& epilogue = "") {
  auto w = tir::MakeWorkload(op, shape, epilogue);
  EXPECT_TRUE(w) << w.error().message;
  return *w;
}

TEST(ProgramFeatures, FixedLengthNamedAndVersioned) {
  EXPECT_EQ(FeatureNames().size(), 25u);
  EXPECT_STREQ(kFeatureVersion, "v1-program-25");
  const tir::Workload w = Make("conv2d", "N=1,C=8,H=10,W=10,K=8,R=3,S=3,pad=1", "bias,relu");
  for (auto target : {tir::TargetKind::kCpu, tir::TargetKind::kCuda}) {
    auto sch = search::DefaultSchedule(w, target);
    ASSERT_TRUE(sch);
    const auto v = ExtractFeatures(LowerOf(*sch));
    ASSERT_EQ(v.size(), FeatureNames().size());
    for (float x : v) EXPECT_TRUE(std::isfinite(x) && x >= 0);
  }
}

TEST(ProgramFeatures, CountsOfTheUnscheduledGemm) {
  // C[i, j] = sum_k A[i, k] * B[k, j] with M=4, N=3, K=5, nothing scheduled: 60 multiply-adds.
  const tir::Workload w = Make("gemm", "M=4,N=3,K=5");
  const tir::PrimFunc f = LowerOf(tir::Schedule(w, tir::TargetKind::kCpu));
  const ProgramCounts c = CountProgram(f);
  EXPECT_EQ(c.float_mul, 60) << tir::ToString(f.body);
  EXPECT_EQ(c.float_add, 60);
  EXPECT_EQ(c.global_loads, 3 * 60);       // A, B and the running sum C
  EXPECT_EQ(c.global_stores, 12 + 60);     // C set to 0 once, then updated 5 times per element
  EXPECT_EQ(c.global_bytes, 4 * (3 * 60 + 72));
  EXPECT_EQ(c.grid, 1);
  EXPECT_EQ(c.threads_per_block, 1);
  EXPECT_EQ(c.shared_bytes, 0);
  const auto v = ExtractFeatures(f);
  EXPECT_FLOAT_EQ(v[1], static_cast<float>(std::log2(61.0)));  // float_mul
}

TEST(ProgramFeatures, LaunchStructureOfTheDefaultCudaGemm) {
  // 16 x 16 threads, 128 x 128 output tiles (2 x 2 blocks of 256 x 256), K steps of 8 through shared
  // memory: 128 x 8 floats of each input per block.
  const tir::Workload w = Make("gemm", "M=256,N=256,K=256");
  auto sch = search::DefaultSchedule(w, tir::TargetKind::kCuda);
  ASSERT_TRUE(sch);
  const ProgramCounts c = CountProgram(LowerOf(*sch));
  EXPECT_EQ(c.grid, 4);
  EXPECT_EQ(c.threads_per_block, 256);
  EXPECT_EQ(c.shared_bytes, 2 * 128 * 8 * 4);
  EXPECT_EQ(c.float_mul, 256.0 * 256 * 256);  // every multiply of the product, once
  EXPECT_GT(c.shared_loads, c.global_loads);  // operands come from shared memory
  EXPECT_GT(c.barriers, 0);
}

}  // namespace
}  // namespace autotune::costmodel
