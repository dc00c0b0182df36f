#include "measure/compile_slots.h"

#include <algorithm>

#include "support/parallel_for.h"

namespace autotune::measure {
namespace {
thread_local std::optional<uint64_t> t_build_order;
}  // namespace

CompileSlots::CompileSlots(int slots)
    : size_(slots > 0 ? slots : UsableCores()), free_(size_) {}

uint64_t CompileSlots::Enter() {
  if (const auto place = BuildOrder::Current()) return *place;
  std::lock_guard<std::mutex> lock(mu_);
  return next_call_++;
}

void CompileSlots::WaitForSlot(std::unique_lock<std::mutex>& lock, uint64_t call) {
  const auto me = waiting_.insert(call);
  cv_.wait(lock, [&] { return free_ > 0 && *waiting_.begin() == call; });
  waiting_.erase(me);
  --free_;
  // Another waiter may be next in line for a slot still free.
  if (free_ > 0 && !waiting_.empty()) cv_.notify_all();
}

void CompileSlots::Acquire(uint64_t call) {
  std::unique_lock<std::mutex> lock(mu_);
  WaitForSlot(lock, call);
}

void CompileSlots::Yield(uint64_t call) {
  std::unique_lock<std::mutex> lock(mu_);
  if (waiting_.empty() || *waiting_.begin() >= call) return;
  ++free_;
  cv_.notify_all();
  WaitForSlot(lock, call);
}

void CompileSlots::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++free_;
  }
  cv_.notify_all();
}

int CompileSlots::Waiting() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(waiting_.size());
}

BuildOrder::BuildOrder(uint64_t place) : previous_(t_build_order) { t_build_order = place; }
BuildOrder::~BuildOrder() { t_build_order = previous_; }
std::optional<uint64_t> BuildOrder::Current() { return t_build_order; }

}  // namespace autotune::measure
