// The CPU runner's timing method, for any call on this host: the kernel of a candidate (the runner's
// child) and a library's operator (tools/cpu_peer), so that both figures mean the same thing.
//
// After a first, untimed call: up to `warmup` more (none when one call already outlasts a repeat),
// then `repeats` timed repeats, each running the call enough times to last min_repeat_ms on the
// steady clock, the caches flushed before each repeat by reading a buffer larger than the
// last-level cache. A repeat's figure is its time divided by its calls; the median is the result.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "measure/repeat_screen.h"
#include "measure/workload_data.h"

namespace autotune::measure {

struct CpuTimingPlan {
  int warmup = 1;
  int repeats = 3;
  double min_repeat_ms = 20;
  const char* flush = nullptr;  // the flush buffer; null: no flush
  int64_t flush_bytes = 0;
  double stop_above_ms = std::numeric_limits<double>::infinity();  // RepeatScreen's limit
};

// Size of the largest CPU cache (bytes), from sysfs; 32 MiB when unknown.
int64_t LastLevelCacheBytes();

// A buffer of `bytes` (0: 1.5 x the last-level cache, at least 8 MiB), its pages written once so
// that they are real (untouched pages all map the one zero page).
AlignedFloats MakeFlushBuffer(int64_t bytes);

// Reads one byte per cache line of `buf`: evicts the kernel's data (reading suffices, and it does
// not copy a parent's pages as writing would).
void FlushCaches(const char* buf, int64_t bytes);

inline double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The timed repeats of `call` (ms per call each), `first_ms` being how long its first call took.
template <class Call>
std::vector<double> TimeRepeats(Call&& call, double first_ms, const CpuTimingPlan& plan) {
  using Clock = std::chrono::steady_clock;
  double one_ms = first_ms;
  for (int i = 0; i < plan.warmup && one_ms < plan.min_repeat_ms; ++i) {
    const auto t0 = Clock::now();
    call();
    one_ms = MsSince(t0);
  }
  const double want = std::ceil(plan.min_repeat_ms / std::max(one_ms, 1e-6));
  const int64_t number = static_cast<int64_t>(std::clamp(want, 1.0, 1e9));
  std::vector<double> latencies;
  for (int r = 0; r < plan.repeats; ++r) {
    if (plan.flush) FlushCaches(plan.flush, plan.flush_bytes);
    const auto t0 = Clock::now();
    for (int64_t k = 0; k < number; ++k) call();
    latencies.push_back(MsSince(t0) / static_cast<double>(number));
    if (RepeatScreen::StopAfter(latencies, plan.stop_above_ms)) break;
  }
  return latencies;
}

}  // namespace autotune::measure
