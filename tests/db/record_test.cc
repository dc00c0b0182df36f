#include <gtest/gtest.h>

#include "db/record.h"
#include "tir/ops/operator.h"

namespace autotune::db {
namespace {

TEST(WorkloadInfo, KeyIsTheSha256OfTheKeyTextAndTracksShapeAndEpilogue) {
  auto a = tir::MakeWorkload("gemm", "M=64,N=32,K=16");
  auto b = tir::MakeWorkload("gemm", "K=16,M=64,N=32");
  auto c = tir::MakeWorkload("gemm", "M=64,N=32,K=16", "relu");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->KeyText(), "gemm[M=64,N=32,K=16];float32;A[M,K] B[K,N] -> C[M,N]");
  EXPECT_EQ(a->Key().size(), 64u);
  EXPECT_EQ(a->Key(), b->Key());  // parameter order in the text does not matter
  EXPECT_NE(a->Key(), c->Key());
  const WorkloadInfo info = WorkloadInfo::From(*c);
  EXPECT_EQ(info.ShapeText(), "M=64,N=32,K=16");
  EXPECT_EQ(info.CanonicalText(), c->CanonicalText());
  EXPECT_EQ(info.flops, c->flops);
}

TEST(TargetQuery, ParsesKindsAndArchitectures) {
  auto q = ParseTargetQuery("cuda:sm_90");
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->Matches(TargetInfo{"cuda", "sm_90", "NVIDIA H200", "580", "13.0"}));
  EXPECT_FALSE(q->Matches(TargetInfo{"cuda", "sm_80", "A100", "", ""}));
  auto any = ParseTargetQuery("cuda");
  ASSERT_TRUE(any);
  EXPECT_TRUE(any->Matches(TargetInfo{"cuda", "sm_80", "A100", "", ""}));
  EXPECT_FALSE(any->Matches(TargetInfo{"cpu", "x86_64", "", "", ""}));
  for (const char* bad : {"", "gpu", "cuda:", "cuda:sm 90", "opencl:x"}) EXPECT_FALSE(ParseTargetQuery(bad)) << bad;
}

}  // namespace
}  // namespace autotune::db
