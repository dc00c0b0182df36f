// RepeatScreen: which candidates get one repeat while tuning.
#include "measure/repeat_screen.h"

#include <gtest/gtest.h>

namespace autotune::measure {
namespace {

TEST(RepeatScreen, StopsAboveTheRatioOfEachWorkloadsBest) {
  RepeatScreen screen(1.5);
  EXPECT_EQ(screen.StopAboveMs("gemm"), 0);  // nothing timed yet: every repeat
  screen.Record("gemm", 2.0);
  EXPECT_DOUBLE_EQ(screen.StopAboveMs("gemm"), 3.0);
  screen.Record("gemm", 4.0);  // slower: the best stays
  EXPECT_DOUBLE_EQ(screen.StopAboveMs("gemm"), 3.0);
  screen.Record("gemm", 1.0);
  EXPECT_DOUBLE_EQ(screen.StopAboveMs("gemm"), 1.5);
  EXPECT_EQ(screen.StopAboveMs("conv2d"), 0);  // workloads do not share a best
  screen.Record("conv2d", 0);                  // no figure (a failed candidate): ignored
  EXPECT_EQ(screen.StopAboveMs("conv2d"), 0);
}

TEST(RepeatScreen, RatioZeroNeverStops) {
  RepeatScreen screen(0);
  screen.Record("gemm", 2.0);
  EXPECT_EQ(screen.StopAboveMs("gemm"), 0);
}

TEST(RepeatScreen, TurnedOffEveryCandidateGetsEveryRepeatAndTheBestStillCounts) {
  RepeatScreen screen(1.5);
  screen.Record("gemm", 2.0);
  screen.Enable(false);
  EXPECT_EQ(screen.StopAboveMs("gemm"), 0);
  screen.Record("gemm", 1.0);
  screen.Enable(true);
  EXPECT_DOUBLE_EQ(screen.StopAboveMs("gemm"), 1.5);
}

TEST(RepeatScreen, OnlyAFirstRepeatAboveTheLimitStops) {
  EXPECT_TRUE(RepeatScreen::StopAfter({3.5}, 3.0));
  EXPECT_FALSE(RepeatScreen::StopAfter({2.5}, 3.0));
  EXPECT_FALSE(RepeatScreen::StopAfter({3.5}, 0));       // off
  EXPECT_FALSE(RepeatScreen::StopAfter({2.5, 3.5}, 3.0));  // later repeats always run to the end
}

}  // namespace
}  // namespace autotune::measure
