#include "cli/report/tuning_charts.h"

#include <fmt/format.h>

#include "cli/report/number_format.h"

namespace autotune::cli::report {

namespace {

// What both charts share: the y axis, the reference line, the curve and its dots.
LineChart CurveChart(const WorkloadSummary& s, const std::vector<CurvePoint>& curve, std::string title) {
  LineChart c;
  c.title = std::move(title);
  c.subtitle = WorkloadTitle(s);
  c.y_title = "best GFLOP/s so far";
  c.steps = true;  // the best so far holds until the next improvement
  for (const CurvePoint& p : curve) {
    c.points.push_back({p.x, p.best_gflops});
    if (p.improved) c.markers.push_back({p.x, p.best_gflops});
  }
  if (s.best_gflops) {
    c.reference_y = kReachShare * *s.best_gflops;
    c.reference_label = fmt::format("{:.0f}% of best ({} GFLOP/s)", kReachShare * 100, FormatGflops(c.reference_y));
    c.y_max = *s.best_gflops * 1.05;  // headroom above the best, so the curve's top is not the frame
  }
  c.empty_text = s.valid == 0 ? "no valid records" : "no data";
  return c;
}

}  // namespace

std::string WorkloadTitle(const WorkloadSummary& s) {
  return fmt::format("{} on {} ({})", s.workload.CanonicalText(), s.target.ShortText(), s.target.device);
}

LineChart TrialsChart(const WorkloadSummary& s) {
  LineChart c = CurveChart(s, s.by_trial, "Best throughput by trial");
  c.x_title = "trial (failed trials included)";
  c.x_max = static_cast<double>(s.records);
  c.x_min_step = 1;
  return c;
}

LineChart SecondsChart(const WorkloadSummary& s) {
  LineChart c = CurveChart(s, s.by_seconds, "Best throughput by time");
  c.x_title = "seconds since the first record (measured_at, 1 s steps)";
  c.x_max = s.span_s.value_or(0);
  c.x_min_step = 1;  // measured_at has whole seconds
  if (s.valid > 0 && !s.span_s) c.empty_text = "measured_at of some records cannot be read";
  return c;
}

}  // namespace autotune::cli::report
