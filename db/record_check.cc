#include "db/record_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "support/parallel_for.h"
#include "tir/ops/operator.h"
#include "tir/schedule/schedule.h"

namespace autotune::db {

namespace {

// JSON and SQLite keep doubles exactly; the slack only absorbs another program's rounding.
constexpr double kMedianSlack = 1e-9;
constexpr double kGflopsSlack = 1e-6;

bool Near(double a, double b, double relative) { return std::fabs(a - b) <= relative * std::max(std::fabs(a), std::fabs(b)); }

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Result<void> CheckFiniteAndNotNegative(const TuningRecord& r) {
  auto check = [](const char* name, double x) -> Result<void> {
    if (!std::isfinite(x)) return MakeError(fmt::format("{} is not a finite number", name));
    if (x < 0) return MakeError(fmt::format("{} is negative ({})", name, x));
    return {};
  };
  for (double x : r.latencies_ms) {
    if (auto c = check("a latency", x); !c) return c;
  }
  if (auto c = check("median_ms", r.median_ms); !c) return c;
  if (auto c = check("gflops", r.gflops); !c) return c;
  if (auto c = check("workload.flops", r.workload.flops); !c) return c;
  if (r.max_rel_error) return check("max_rel_error", *r.max_rel_error);
  return {};
}

}  // namespace

Result<void> CheckRecordNumbers(const TuningRecord& r) {
  if (auto c = CheckFiniteAndNotNegative(r); !c) return c;
  if (!r.valid()) return {};
  if (r.latencies_ms.empty()) return MakeError("a valid record has no latencies");
  if (*std::min_element(r.latencies_ms.begin(), r.latencies_ms.end()) <= 0) {
    return MakeError("a valid record has a latency of 0");
  }
  const double median = MedianOf(r.latencies_ms);
  if (!Near(r.median_ms, median, kMedianSlack)) {
    return MakeError(fmt::format("median_ms {} is not the median of the {} latencies ({})", r.median_ms,
                                 r.latencies_ms.size(), median));
  }
  const double gflops = r.workload.flops / (r.median_ms * 1e6);
  if (r.workload.flops > 0 && !Near(r.gflops, gflops, kGflopsSlack)) {
    return MakeError(fmt::format("gflops {} is not the workload's FLOPs over the median ({})", r.gflops, gflops));
  }
  return {};
}

Result<void> RecordChecker::Check(const TuningRecord& r) {
  if (auto c = CheckRecordNumbers(r); !c) return c;
  if (!r.valid()) return {};
  auto w = WorkloadOf(r.workload);
  if (!w) return w.error();
  return CheckReplays(r, **w);
}

std::optional<std::pair<size_t, Error>> RecordChecker::FirstFailure(const std::vector<TuningRecord>& records) {
  // Numbers and workloads in order (the workload cache is not shared between threads), replays on
  // every core: an import of thousands of records spends its time there.
  std::vector<const tir::Workload*> workload_of(records.size(), nullptr);
  std::vector<std::optional<Error>> problem(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    if (auto c = CheckRecordNumbers(records[i]); !c) {
      problem[i] = c.error();
      break;  // later records cannot come first
    }
    if (!records[i].valid()) continue;
    auto w = WorkloadOf(records[i].workload);
    if (!w) {
      problem[i] = w.error();
      break;
    }
    workload_of[i] = *w;
  }
  ParallelFor(UsableCores(), records.size(), [&](size_t i) {
    if (!workload_of[i]) return;
    if (auto c = CheckReplays(records[i], *workload_of[i]); !c) problem[i] = c.error();
  });
  for (size_t i = 0; i < records.size(); ++i) {
    if (problem[i]) return std::make_pair(i, *problem[i]);
  }
  return std::nullopt;
}

Result<void> RecordChecker::CheckReplays(const TuningRecord& r, const tir::Workload& w) {
  auto trace = tir::Trace::FromJsonText(r.trace_json);
  if (!trace) return MakeError(fmt::format("trace: {}", trace.error().message));
  const tir::TargetKind kind = r.target.kind == "cuda" ? tir::TargetKind::kCuda : tir::TargetKind::kCpu;
  if (auto sch = tir::Schedule::Replay(w, kind, *trace); !sch) {
    return MakeError(fmt::format("trace does not replay on {}: {}", r.workload.CanonicalText(), sch.error().message));
  }
  return {};
}

Result<const tir::Workload*> RecordChecker::WorkloadOf(const WorkloadInfo& info) {
  if (auto it = workloads_.find(info.key); it != workloads_.end()) return &it->second;
  auto w = tir::MakeWorkload(info.op, info.ShapeText(), info.epilogue, info.dtype);
  if (!w) return MakeError(fmt::format("workload: {}", w.error().message));
  if (w->Key() != info.key) return MakeError(fmt::format("workload.key: {} is not the key of {}", info.key, w->CanonicalText()));
  return &workloads_.emplace(info.key, std::move(*w)).first->second;
}

}  // namespace autotune::db
