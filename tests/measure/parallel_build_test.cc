#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <string>
#include <vector>

#include "measure/parallel_build.h"
#include "tir/buffer.h"
#include "tir/codegen/cuda_kernels.h"
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

// A function whose body fills a register array of `extent` in a serial loop: rolled for the
// default rule, unrolled by CUDA codegen.
BuildInput RegisterLoop(int64_t extent) {
  tir::Buffer acc = tir::MakeBuffer("acc", tir::DType::kFloat32, {tir::IntImm(extent)}, tir::Scope::kLocal);
  tir::Var i = tir::MakeVar("i");
  tir::PrimFunc f;
  f.name = "r" + std::to_string(extent);
  f.body = tir::For(i, tir::IntImm(0), tir::IntImm(extent), tir::ForKind::kSerial,
                    tir::Store(acc, tir::FloatImm(0.0), {i}));
  return BuildInput::FromFunc(f);
}

TEST(ParallelBuild, TheBackendsUnrollRuleSetsTheOrder) {
  const std::vector<BuildInput> inputs = {Unrolled(16), RegisterLoop(32), Unrolled(4)};
  EXPECT_EQ(LargestFirst(inputs), (std::vector<size_t>{0, 2, 1}));
  EXPECT_EQ(LargestFirst(inputs, tir::CudaFullyUnrolls), (std::vector<size_t>{1, 0, 2}));
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
  CompileSlots one(1);
  auto one_thread = BuildInParallel(inputs, one, build);
  EXPECT_EQ(started, (std::vector<std::string>{"f32", "f8", "f2"}));
  for (int threads : {1, 2, 8}) {
    CompileSlots slots(threads);
    auto results = threads == 1 ? one_thread : BuildInParallel(inputs, slots, build);
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(results[0].entry, "f2");
    EXPECT_EQ(results[1].entry, "f32");
    EXPECT_EQ(results[2].entry, "f8");
  }
  CompileSlots four(4);
  EXPECT_TRUE(BuildInParallel({}, four, build).empty());
}

// Two batches built at once on 2 shared compilers: the older batch's compiles all start first, and
// the newer one's start as soon as the older one has nothing left to start, while its last
// compiles still run (no barrier between the batches).
TEST(ParallelBuild, ANewerBatchTakesTheCompilersTheOlderOneNoLongerNeeds) {
  CompileSlots slots(2);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> started;
  int released = 0;  // compiles of the older batch allowed to finish
  auto build = [&](const BuildInput& in) {
    std::unique_lock<std::mutex> lock(mu);
    started.push_back(in.func.name);
    const int my_turn = static_cast<int>(started.size());
    cv.notify_all();
    if (in.func.name[0] == 'f') cv.wait(lock, [&] { return released >= my_turn; });
    BuildResult r;
    r.entry = in.func.name;
    return r;
  };
  auto count_started = [&](char batch) {
    int n = 0;
    for (const auto& s : started) n += s[0] == batch;
    return n;
  };
  const std::vector<BuildInput> older = {Unrolled(4), Unrolled(3), Unrolled(2), Unrolled(1)};
  const std::vector<BuildInput> newer = {RegisterLoop(2), RegisterLoop(1)};
  std::thread a([&] { BuildInParallel(older, slots, build); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return count_started('f') == 2; });  // both compilers busy with the older batch
  }
  std::vector<BuildResult> newer_results;
  std::thread b([&] { newer_results = BuildInParallel(newer, slots, build); });
  while (slots.Waiting() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // both its threads wait
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(count_started('r'), 0);
    released = 2;  // two compiles of the older batch finish: its other two start
  }
  cv.notify_all();
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return count_started('f') == 4; });
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    released = 3;  // one more finishes: nothing of the older batch is left to start
  }
  cv.notify_all();
  {
    // The newer batch runs to its end on the freed compiler while the older one's last compile runs.
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return count_started('r') == 2; });
    EXPECT_EQ(released, 3);
  }
  b.join();
  {
    std::lock_guard<std::mutex> lock(mu);
    released = 4;
  }
  cv.notify_all();
  a.join();
  ASSERT_EQ(newer_results.size(), 2u);
  EXPECT_EQ(newer_results[0].entry, "r2");
  // Compiles released together start in either order (TSan's scheduling swapped f2 and f1 once).
  ASSERT_EQ(started.size(), 6u);
  auto phase = [&](size_t begin) { return std::multiset<std::string>{started[begin], started[begin + 1]}; };
  EXPECT_EQ(phase(0), (std::multiset<std::string>{"f4", "f3"}));
  EXPECT_EQ(phase(2), (std::multiset<std::string>{"f2", "f1"}));
  EXPECT_EQ(phase(4), (std::multiset<std::string>{"r2", "r1"}));
}

// With BuildOrder, a batch numbered earlier goes first even when it arrives later: the compiler
// that finishes a compile of the later-numbered batch hands over to it.
TEST(ParallelBuild, BuildOrderBeatsArrivalOrder) {
  CompileSlots slots(1);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> started;
  bool go = false;
  auto build = [&](const BuildInput& in) {
    std::unique_lock<std::mutex> lock(mu);
    started.push_back(in.func.name);
    cv.notify_all();
    if (in.func.name == "f3") cv.wait(lock, [&] { return go; });  // the first compile of the later batch
    BuildResult r;
    r.entry = in.func.name;
    return r;
  };
  const std::vector<BuildInput> later = {Unrolled(3), Unrolled(2), Unrolled(1)};
  const std::vector<BuildInput> earlier = {RegisterLoop(1)};
  std::thread b([&] {
    BuildOrder place(5);
    BuildInParallel(later, slots, build);
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return started.size() == 1; });
  }
  std::thread a([&] {
    BuildOrder place(2);
    BuildInParallel(earlier, slots, build);
  });
  while (slots.Waiting() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  {
    std::lock_guard<std::mutex> lock(mu);
    go = true;
  }
  cv.notify_all();
  a.join();
  b.join();
  EXPECT_EQ(started, (std::vector<std::string>{"f3", "r1", "f2", "f1"}));
  EXPECT_FALSE(BuildOrder::Current().has_value());
}

// Waiters for a compiler are served oldest call first, whatever the order they asked in.
TEST(CompileSlots, TheOldestCallWaitingGetsTheNextSlot) {
  CompileSlots slots(1);
  const uint64_t first = slots.Enter(), second = slots.Enter(), third = slots.Enter();
  slots.Acquire(first);
  std::mutex mu;
  std::vector<uint64_t> served;
  auto wait_for_slot = [&](uint64_t call) {
    slots.Acquire(call);
    {
      std::lock_guard<std::mutex> lock(mu);
      served.push_back(call);
    }
    slots.Release();
  };
  std::thread late(wait_for_slot, third);
  while (slots.Waiting() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread early(wait_for_slot, second);
  while (slots.Waiting() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  slots.Release();
  late.join();
  early.join();
  EXPECT_EQ(served, (std::vector<uint64_t>{second, third}));
  EXPECT_EQ(slots.size(), 1);
  EXPECT_GE(CompileSlots(0).size(), 1);  // 0: one per hardware thread
}

}  // namespace
}  // namespace autotune::measure
