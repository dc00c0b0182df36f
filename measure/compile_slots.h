// CompileSlots: the compilers a builder runs at once, shared by its concurrent Build calls, oldest
// call first. The tuner builds the next round while the previous one's last (slowest) compiles
// still run: once a round has nothing left to start, its idle compilers take the next round's
// compiles instead of waiting for the round's straggler, and a round's compiles still go before
// any later round's. That shortens the build stage against a
// barrier between rounds whenever the next round is proposed in time.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>

namespace autotune::measure {

class CompileSlots {
 public:
  // `slots` compilers at once; 0: one per hardware thread.
  explicit CompileSlots(int slots);
  int size() const { return size_; }

  // The number of a new Build call, which sets its place in line (lower first): the BuildOrder of
  // the calling thread if it has one, else the next number in arrival order.
  uint64_t Enter();
  // Blocks until a slot is free and no call ahead in line waits for one.
  void Acquire(uint64_t call);
  // Between two compiles of `call`: hands the slot to a call ahead in line if one waits (and waits
  // for a slot again), else keeps it.
  void Yield(uint64_t call);
  void Release();
  // Threads blocked in Acquire or Yield.
  int Waiting();

 private:
  void WaitForSlot(std::unique_lock<std::mutex>& lock, uint64_t call);

  const int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
  uint64_t next_call_ = 0;
  std::multiset<uint64_t> waiting_;
};

// While it lives, the Build calls of this thread take `place` in line in every CompileSlots
// (instead of their arrival order): the tuner numbers its rounds, whose builds may reach the builder
// out of order. A builder's calls should all be numbered this way, or none.
class BuildOrder {
 public:
  explicit BuildOrder(uint64_t place);
  ~BuildOrder();
  BuildOrder(const BuildOrder&) = delete;
  BuildOrder& operator=(const BuildOrder&) = delete;

  static std::optional<uint64_t> Current();

 private:
  std::optional<uint64_t> previous_;
};

}  // namespace autotune::measure
