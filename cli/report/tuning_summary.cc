#include "cli/report/tuning_summary.h"

#include <algorithm>
#include <numeric>

namespace autotune::cli::report {

namespace {

// The target as far as curves are concerned (see TrialGrouper).
std::string GroupKey(const db::TuningRecord& r) {
  // '\n' cannot occur in a workload key (hex) and keeps "a"+"bc" apart from "ab"+"c".
  return r.workload.key + '\n' + r.target.kind + '\n' + r.target.arch + '\n' + r.target.device;
}

// The best-so-far curve of walking the trials in `order`, trial i at x_of(i), closed at x_end.
template <class XOf>
std::vector<CurvePoint> BestSoFar(const std::vector<Trial>& trials, const std::vector<size_t>& order, XOf x_of,
                                  double x_end) {
  std::vector<CurvePoint> curve;
  double best = 0;
  for (size_t i : order) {
    const Trial& t = trials[i];
    if (!t.valid || t.gflops <= best) continue;
    best = t.gflops;
    curve.push_back({x_of(i), best, true});
  }
  if (!curve.empty() && curve.back().x < x_end) curve.push_back({x_end, best, false});
  return curve;
}

}  // namespace

void TrialGrouper::Add(const db::TuningRecord& r) {
  auto [it, fresh] = index_.try_emplace(GroupKey(r), groups_.size());
  if (fresh) groups_.push_back({r.workload, r.target, {}});
  Trial t;
  t.valid = r.valid() && r.gflops > 0 && r.median_ms > 0;
  t.median_ms = r.median_ms;
  t.gflops = r.gflops;
  t.measured_at = db::ParseIso8601(r.measured_at);
  groups_[it->second].trials.push_back(t);
}

std::vector<WorkloadTrials> TrialGrouper::Take() {
  index_.clear();
  return std::move(groups_);
}

WorkloadSummary Summarize(const WorkloadTrials& in) {
  WorkloadSummary s;
  s.workload = in.workload;
  s.target = in.target;
  const auto& trials = in.trials;
  s.records = static_cast<int64_t>(trials.size());
  for (const Trial& t : trials) {
    if (!t.valid) continue;
    ++s.valid;
    s.best_ms = std::min(s.best_ms.value_or(t.median_ms), t.median_ms);
    s.best_gflops = std::max(s.best_gflops.value_or(t.gflops), t.gflops);
  }

  std::vector<size_t> order(trials.size());
  std::iota(order.begin(), order.end(), 0);
  s.by_trial = BestSoFar(
      trials, order, [](size_t i) { return static_cast<double>(i + 1); }, static_cast<double>(trials.size()));
  if (s.best_gflops) {
    // The curve only rises at its points, so the first point at the share is the first trial there.
    for (const CurvePoint& p : s.by_trial) {
      if (p.best_gflops >= kReachShare * *s.best_gflops) {
        s.trials_to_reach = static_cast<int64_t>(p.x);
        break;
      }
    }
  }

  const bool timed = !trials.empty() && std::all_of(trials.begin(), trials.end(),
                                                    [](const Trial& t) { return t.measured_at.has_value(); });
  if (!timed) return s;
  const auto [first, last] = std::minmax_element(
      trials.begin(), trials.end(), [](const Trial& a, const Trial& b) { return *a.measured_at < *b.measured_at; });
  const int64_t origin = *first->measured_at;
  s.span_s = static_cast<double>(*last->measured_at - origin);
  if (*s.span_s > 0) s.candidates_per_s = static_cast<double>(s.records) / *s.span_s;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return *trials[a].measured_at < *trials[b].measured_at; });
  s.by_seconds = BestSoFar(
      trials, order, [&](size_t i) { return static_cast<double>(*trials[i].measured_at - origin); }, *s.span_s);
  return s;
}

}  // namespace autotune::cli::report
