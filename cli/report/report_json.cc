#include "cli/report/report_json.h"

namespace autotune::cli::report {

namespace {

using nlohmann::json;

template <class T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json Row(const ReportSection& sec) {
  const WorkloadSummary& s = sec.summary;
  return {
      {"workload", s.workload.CanonicalText()},
      {"key", s.workload.key},
      {"op", s.workload.op},
      {"shape", s.workload.ShapeText()},  // text in canonical order, as `tune --tasks` takes it
      {"epilogue", s.workload.epilogue},
      {"flops", s.workload.flops},
      {"target", {{"kind", s.target.kind}, {"arch", s.target.arch}, {"device", s.target.device}}},
      {"records", s.records},
      {"valid", s.valid},
      {"best_ms", OrNull(s.best_ms)},
      {"best_gflops", OrNull(s.best_gflops)},
      {"trials_to_90", OrNull(s.trials_to_reach)},
      {"span_s", OrNull(s.span_s)},
      {"candidates_per_s", OrNull(s.candidates_per_s)},
      {"trials_svg", sec.slug + "-trials.svg"},
      {"seconds_svg", sec.slug + "-seconds.svg"},
  };
}

}  // namespace

json ReportJson(const ReportHeader& h, const std::vector<ReportSection>& sections) {
  json rows = json::array();
  for (const auto& sec : sections) rows.push_back(Row(sec));
  return {{"database", h.database}, {"generated_at", h.generated_at},      {"autotune_version", h.version},
          {"filter", h.filter},     {"targets", TargetsPresent(sections)}, {"workloads", rows}};
}

}  // namespace autotune::cli::report
