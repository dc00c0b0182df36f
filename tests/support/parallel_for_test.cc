#include "support/parallel_for.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <vector>

namespace autotune {
namespace {

TEST(ParallelFor, RunsEveryIndexOnce) {
  std::vector<std::atomic<int>> runs(1000);
  ParallelFor(4, runs.size(), [&](size_t i) { runs[i].fetch_add(1); });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
}

// Restores the calling thread's CPU affinity mask when the test ends.
class AffinityRestorer {
 public:
  AffinityRestorer() { ok_ = sched_getaffinity(0, sizeof(saved_), &saved_) == 0; }
  ~AffinityRestorer() {
    if (ok_) sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  bool ok() const { return ok_; }
  const cpu_set_t& saved() const { return saved_; }

 private:
  cpu_set_t saved_;
  bool ok_ = false;
};

TEST(UsableCores, FollowsTheAffinityMask) {
  AffinityRestorer restore;
  ASSERT_TRUE(restore.ok());
  EXPECT_EQ(UsableCores(), CPU_COUNT(&restore.saved()));
  // Pinned to the first CPU it may use (as `taskset -c N` would), it counts one core, whatever the
  // machine has.
  int first = 0;
  while (!CPU_ISSET(first, &restore.saved())) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  EXPECT_EQ(UsableCores(), 1);
}

}  // namespace
}  // namespace autotune
