#include "search/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/check.h"

namespace autotune::search {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

int FirstRoundSize(int trials_left, int tasks_without_round, int batch_size) {
  return std::min({std::max(1, batch_size), trials_left, std::max(1, trials_left / std::max(1, tasks_without_round))});
}

TaskScheduler::TaskScheduler(std::vector<double> weights)
    : weights_(std::move(weights)), history_(weights_.size()), finished_(weights_.size(), false),
      out_(weights_.size(), 0) {
  for (double w : weights_) AUTOTUNE_CHECK(std::isfinite(w) && w > 0, "task weights must be positive");
}

void TaskScheduler::Start(int task) {
  AUTOTUNE_CHECK(task >= 0 && task < static_cast<int>(weights_.size()), "TaskScheduler::Start: no such task");
  ++out_[task];
}

void TaskScheduler::Record(int task, double best_latency_ms, int trials) {
  AUTOTUNE_CHECK(task >= 0 && task < static_cast<int>(weights_.size()), "TaskScheduler::Record: no such task");
  if (out_[task] > 0) --out_[task];
  AUTOTUNE_CHECK(!std::isnan(best_latency_ms) && best_latency_ms >= 0, "TaskScheduler::Record: bad latency");
  auto& h = history_[task];
  AUTOTUNE_CHECK(trials >= (h.empty() ? 0 : h.back().first), "TaskScheduler::Record: trials went down");
  // The objective is the best so far: a re-measured best that came out slower keeps the earlier one.
  if (!h.empty()) best_latency_ms = std::min(best_latency_ms, h.back().second);
  h.emplace_back(trials, best_latency_ms);
}

void TaskScheduler::Finish(int task) {
  AUTOTUNE_CHECK(task >= 0 && task < static_cast<int>(weights_.size()), "TaskScheduler::Finish: no such task");
  finished_[task] = true;
}

int TaskScheduler::Rounds(int task) const {
  AUTOTUNE_CHECK(task >= 0 && task < static_cast<int>(weights_.size()), "TaskScheduler::Rounds: no such task");
  return static_cast<int>(history_[task].size()) + out_[task];
}

double TaskScheduler::WeightedLatency() const {
  double total = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    if (history_[i].empty()) return kInf;
    total += weights_[i] * history_[i].back().second;
  }
  return total;
}

// The largest finite best latency of any task (finished ones too), or +infinity when none has one:
// the stand-in latency of a task that has none after its priority rounds.
double TaskScheduler::WorstKnownLatency() const {
  double worst = -1;
  for (const auto& h : history_) {
    if (!h.empty() && std::isfinite(h.back().second)) worst = std::max(worst, h.back().second);
  }
  return worst < 0 ? kInf : worst;
}

bool TaskScheduler::HasPriority(int task) const {
  const auto& h = history_[task];
  if (h.empty()) return out_[task] == 0;  // rule 1; with its first round out, it waits for the result
  return std::isinf(h.back().second) && Rounds(task) < kNoResultPriorityRounds;
}

double TaskScheduler::Gain(int task, double worst_known) const {
  const auto& h = history_[task];
  const double recorded = static_cast<double>(h.size());
  const double rounds = static_cast<double>(Rounds(task));
  const auto [trials, latency] = h.back();
  if (std::isinf(latency)) {
    // No latency after its priority rounds: optimism alone, with the worst latency we know.
    return std::isinf(worst_known) ? 0.0 : weights_[task] * kOptimism * worst_known / rounds;
  }
  // The backward window: the last kBackwardWindow rounds, starting no earlier than the first round
  // that had a latency (a drop from +infinity is no rate).
  const int last = static_cast<int>(h.size()) - 1;
  int start = std::max(0, last - kBackwardWindow);
  while (std::isinf(h[start].second)) ++start;
  double recent = 0;
  if (h[last].first > h[start].first) {
    const double per_trial = (h[start].second - latency) / (h[last].first - h[start].first);
    recent = per_trial * (trials / recorded);  // times the trials of one of its rounds
  }
  const double optimistic = latency / rounds;
  return weights_[task] * (recent + kOptimism * optimistic);
}

double TaskScheduler::ExpectedGain(int task) const {
  AUTOTUNE_CHECK(task >= 0 && task < static_cast<int>(weights_.size()), "TaskScheduler::ExpectedGain: no such task");
  if (HasPriority(task)) return kInf;
  if (history_[task].empty()) return 0;  // its first round is out: nothing known yet
  return Gain(task, WorstKnownLatency());
}

int TaskScheduler::Next() const {
  const int n = static_cast<int>(weights_.size());
  // Rule 1: first rounds, in order.
  for (int i = 0; i < n; ++i) {
    if (!finished_[i] && Rounds(i) == 0) return i;
  }
  // Rule 2: tasks known to have no latency, for their first few rounds; the fewest rounds first.
  int pick = -1;
  for (int i = 0; i < n; ++i) {
    if (finished_[i] || !HasPriority(i)) continue;  // (a task waiting for its first result has none)
    if (pick < 0 || Rounds(i) < Rounds(pick)) pick = i;
  }
  if (pick >= 0) return pick;
  const double worst = WorstKnownLatency();
  if (!std::isinf(worst)) {
    // Rule 3: the largest expected gain of the tasks with a result; strict > keeps ties at the lower
    // index.
    double best_gain = -1;
    for (int i = 0; i < n; ++i) {
      if (finished_[i] || history_[i].empty()) continue;
      const double gain = Gain(i, worst);
      if (gain > best_gain) {
        best_gain = gain;
        pick = i;
      }
    }
    if (pick >= 0) return pick;
  }
  // No task has a latency at all, or every unfinished one waits for its first result: share the
  // rounds evenly.
  for (int i = 0; i < n; ++i) {
    if (finished_[i]) continue;
    if (pick < 0 || Rounds(i) < Rounds(pick)) pick = i;
  }
  return pick;
}

}  // namespace autotune::search
