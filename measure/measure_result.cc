#include "measure/measure_result.h"

#include <algorithm>
#include <cmath>

namespace autotune::measure {

namespace {
constexpr ErrorKind kAllKinds[] = {ErrorKind::kNone,       ErrorKind::kInvalidSchedule, ErrorKind::kBuildError,
                                   ErrorKind::kBuildTimeout, ErrorKind::kRunError,      ErrorKind::kRunTimeout,
                                   ErrorKind::kWrongAnswer};
}  // namespace

const char* ErrorKindName(ErrorKind k) {
  switch (k) {
    case ErrorKind::kNone: return "NONE";
    case ErrorKind::kInvalidSchedule: return "INVALID_SCHEDULE";
    case ErrorKind::kBuildError: return "BUILD_ERROR";
    case ErrorKind::kBuildTimeout: return "BUILD_TIMEOUT";
    case ErrorKind::kRunError: return "RUN_ERROR";
    case ErrorKind::kRunTimeout: return "RUN_TIMEOUT";
    case ErrorKind::kWrongAnswer: return "WRONG_ANSWER";
  }
  return "?";
}

std::optional<ErrorKind> ParseErrorKind(std::string_view s) {
  for (ErrorKind k : kAllKinds) {
    if (s == ErrorKindName(k)) return k;
  }
  return std::nullopt;
}

MeasureResult MeasureResult::Error(ErrorKind kind, std::string message) {
  MeasureResult r;
  r.error_kind = kind;
  r.error_message = std::move(message);
  return r;
}

void Summarize(MeasureResult& r) {
  if (r.latencies_ms.empty()) {
    r.median_ms = r.spread = 0;
    return;
  }
  std::vector<double> v = r.latencies_ms;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  r.median_ms = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  r.spread = r.median_ms > 0 ? (v.back() - v.front()) / r.median_ms : 0;
}

nlohmann::json ToJson(const MeasureResult& r, double flops) {
  using nlohmann::json;
  json j;
  const bool timed = r.ok() && r.median_ms > 0;
  j["latency_ms"] = timed ? json(r.median_ms) : json(nullptr);
  j["gflops"] = timed && flops > 0 ? json(flops / (r.median_ms * 1e6)) : json(nullptr);
  j["correct"] = r.correct;
  j["max_rel_error"] = std::isfinite(r.max_rel_error) ? json(r.max_rel_error) : json(nullptr);
  j["error"] = r.ok() ? json(nullptr) : json(std::string(ErrorKindName(r.error_kind)) + ": " + r.error_message);
  j["error_kind"] = ErrorKindName(r.error_kind);
  j["latencies_ms"] = r.latencies_ms;
  j["spread"] = r.spread;
  j["build_s"] = r.build_seconds;
  if (r.build_cpu_seconds > 0) j["build_cpu_s"] = r.build_cpu_seconds;
  j["run_s"] = r.run_seconds;
  if (r.timed_seconds > 0) j["timed_s"] = r.timed_seconds;
  return j;
}

MeasureResult MeasureResultFromJson(const nlohmann::json& j) {
  MeasureResult r;
  r.error_kind = ParseErrorKind(j.value("error_kind", "NONE")).value_or(ErrorKind::kRunError);
  if (j.contains("error") && j["error"].is_string()) {
    std::string e = j["error"].get<std::string>();
    const std::string prefix = std::string(ErrorKindName(r.error_kind)) + ": ";
    r.error_message = e.rfind(prefix, 0) == 0 ? e.substr(prefix.size()) : e;
  }
  if (j.contains("latencies_ms")) r.latencies_ms = j["latencies_ms"].get<std::vector<double>>();
  Summarize(r);
  r.correct = j.value("correct", false);
  r.max_rel_error = j.contains("max_rel_error") && j["max_rel_error"].is_number()
                        ? j["max_rel_error"].get<double>()
                        : (r.error_kind == ErrorKind::kWrongAnswer ? INFINITY : 0.0);
  r.build_seconds = j.value("build_s", 0.0);
  r.build_cpu_seconds = j.value("build_cpu_s", 0.0);
  r.run_seconds = j.value("run_s", 0.0);
  r.timed_seconds = j.value("timed_s", 0.0);
  return r;
}

}  // namespace autotune::measure
