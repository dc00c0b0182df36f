#include <gtest/gtest.h>

#include <ctime>

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

TEST(Iso8601, ParsesWhatNowIso8601WritesAndNothingElse) {
  EXPECT_EQ(ParseIso8601("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseIso8601("2026-11-29T09:37:21Z"), 1795945041);
  EXPECT_EQ(ParseIso8601("2024-02-29T23:59:59Z"), 1709251199);  // a leap day
  const std::string now = NowIso8601();
  auto parsed = ParseIso8601(now);
  ASSERT_TRUE(parsed) << now;
  EXPECT_NEAR(static_cast<double>(*parsed), static_cast<double>(std::time(nullptr)), 5.0);
  for (const char* bad : {"", "2026-11-29 09:37:21Z", "2026-11-29T09:37:21", "2026-11-29T09:37:21+01:00",
                          "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-02-30T00:00:00Z",
                          "2026-11-29T24:00:00Z", "2026-11-29T09:60:00Z", "2026-11-29T09:37:2xZ",
                          "2026-11-29T09:37:21.5Z"}) {
    EXPECT_FALSE(ParseIso8601(bad)) << bad;
  }
}

}  // namespace
}  // namespace autotune::db
