// Screening while tuning: a candidate whose first timed repeat is already well above the best median
// timed so far for its workload cannot become the best, and its further repeats would only refine a
// figure nobody picks. Its timing ends after that repeat, and that one repeat is its figure (still
// a full repeat: min_repeat_ms long, caches flushed before it). The best candidates get all their
// repeats, so the figures that decide the search and the database's best are as precise as before.
//
// A runner keeps one screen and asks it, before each candidate, for the latency above which the
// first repeat ends the timing; the process that times the kernel applies it (StopAfter).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace autotune::measure {

class RepeatScreen {
 public:
  // ratio: a first repeat above ratio x the workload's best median ends the timing; 0: never.
  explicit RepeatScreen(double ratio) : ratio_(ratio) {}

  // The latency above which a candidate of `workload` (a runner's in-memory key) gets one repeat
  // only; 0: every repeat (screening off, or nothing timed yet).
  double StopAboveMs(const std::string& workload) const {
    auto it = best_ms_.find(workload);
    return enabled_ && ratio_ > 0 && it != best_ms_.end() ? ratio_ * it->second : 0;
  }

  // Off: every candidate gets all its repeats (a re-measurement of the best, which must not be cut
  // short by one noisy repeat); the bests recorded meanwhile still count when it is on again.
  void Enable(bool on) { enabled_ = on; }

  // A correct candidate's median (screened ones too: they cannot lower the best).
  void Record(const std::string& workload, double median_ms) {
    if (!(median_ms > 0)) return;
    auto [it, inserted] = best_ms_.try_emplace(workload, median_ms);
    if (!inserted) it->second = std::min(it->second, median_ms);
  }

  // In the timing loop, after each repeat: true when the first repeat ends the timing.
  static bool StopAfter(const std::vector<double>& latencies, double stop_above_ms) {
    return stop_above_ms > 0 && latencies.size() == 1 && latencies[0] > stop_above_ms;
  }

 private:
  double ratio_;
  bool enabled_ = true;
  std::map<std::string, double> best_ms_;
};

}  // namespace autotune::measure
