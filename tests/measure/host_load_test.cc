#include "measure/host_load.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace autotune::measure {
namespace {

TEST(HostLoad, BusyCoresIsAShareOfTheMachine) {
  const auto busy = BusyCores(50);
  ASSERT_TRUE(busy.has_value());
  EXPECT_GE(*busy, 0.0);
  EXPECT_LE(*busy, std::thread::hardware_concurrency() + 0.01);
}

// Threads spinning on every core leave a kernel that wants all of them nothing free: a warning.
TEST(HostLoad, SpinningThreadsOnEveryCoreAreWarnedAbout) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i) {
    spinners.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  const auto warning = BusyHostWarning(0);
  stop = true;
  for (auto& t : spinners) t.join();
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("CPU timings will be noisy"), std::string::npos) << *warning;
}

}  // namespace
}  // namespace autotune::measure
