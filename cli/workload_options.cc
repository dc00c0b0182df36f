#include "cli/workload_options.h"

#include <fmt/format.h>

#include "cli/cli_error.h"
#include "cli/target_option.h"
#include "search/default_schedule.h"
#include "search/sketch.h"
#include "support/input_file.h"
#include "tir/ops/operator.h"

namespace autotune::cli {
namespace {

// The trace in a file that --trace names: a trace itself, a `measure --json` report (its "trace"),
// or a `tune --json` report (the best trace of its task for this workload).
nlohmann::json TraceInReport(const nlohmann::json& j, const tir::Workload& w, const std::string& file) {
  if (!j.is_object()) return j;
  if (j.contains("trace") && j["trace"].is_object()) return j["trace"];
  if (!j.contains("tasks") || !j["tasks"].is_array()) return j;
  std::string workloads;
  for (const auto& task : j["tasks"]) {
    const std::string name = task.is_object() ? task.value("workload", "") : "";
    if (name == w.CanonicalText()) {
      if (task.contains("best_trace") && task["best_trace"].is_object()) return task["best_trace"];
      throw UserError{fmt::format("tune report '{}' has no valid schedule for {}", file, name)};
    }
    workloads += (workloads.empty() ? "" : "; ") + name;
  }
  throw UserError{fmt::format("tune report '{}' has no task {} (its tasks: {})", file, w.CanonicalText(),
                              workloads.empty() ? "none" : workloads)};
}

}  // namespace

std::string NumberTypeName(const std::string& dtype, const std::string& precision) {
  auto type = tir::CombineNumberType(dtype, precision);
  if (!type) throw UserError{type.error().message};
  return type->Name();
}

void WorkloadOptions::AddTo(CLI::App& cmd, bool) {
  cmd.add_option("--op", op, "operator (see `autotune ops`)")->required();
  cmd.add_option("--shape", shape, "shape parameters, e.g. M=1024,N=1024,K=1024")->required();
  cmd.add_option("--epilogue", epilogue, kEpilogueHelp);
  cmd.add_option("--dtype", dtype,
                 "element type of the tensors: float32, float16 or bfloat16 (16-bit types accumulate in float32 and "
                 "round once into the output)");
  cmd.add_option("--precision", precision, kPrecisionHelp);
  cmd.add_option("--target", target, TargetOptionHelp(false));
  auto* trace = cmd.add_option("--trace", trace_file,
                               "the schedule of this trace file (a trace, a `measure --json` report, or a `tune "
                               "--json` report: its best for this workload) instead of the default schedule");
  cmd.add_option("--sketch", sketch,
                 "the hand-picked schedule of this sketch (see `tune --help`) instead of the default schedule")
      ->excludes(trace);
}

tir::Workload WorkloadOptions::MakeWorkload() const {
  auto w = tir::MakeWorkload(op, shape, epilogue, NumberTypeName(dtype, precision));
  if (!w) throw UserError{w.error().message};
  return std::move(w).value();
}

tir::TargetKind WorkloadOptions::Target() const {
  measure::MeasureConfig unused;
  return *tir::ParseTargetKind(TakeTargetOption(target, unused, /*allow_auto=*/false));
}

tir::Schedule WorkloadOptions::MakeSchedule(const tir::Workload& w) const {
  if (!sketch.empty()) {
    const search::SketchSpec* spec = search::FindSketch(sketch);
    if (!spec) throw UserError{fmt::format("unknown sketch '{}' (known: {})", sketch, search::BuiltinSketchNames())};
    if (spec->target != Target()) {
      throw UserError{fmt::format("sketch {} does not apply to {} on the {} target", sketch, w.CanonicalText(),
                                  tir::TargetKindName(Target()))};
    }
    auto sch = search::HandPickedSchedule(w, *spec, SearchTarget(target).cpu);
    if (!sch) throw UserError{sch.error().message};
    return std::move(sch).value();
  }
  if (trace_file.empty()) {
    auto sch = search::DefaultSchedule(w, SearchTarget(target));
    if (!sch) throw UserError{fmt::format("no default schedule for {}: {}", w.CanonicalText(), sch.error().message)};
    return std::move(sch).value();
  }
  // Traces are kilobytes; a report holding one, a few megabytes at most.
  auto text = ReadInputFile(trace_file, 64 * kMiB);
  if (!text) throw UserError{fmt::format("cannot read trace file '{}': {}", trace_file, text.error().message)};
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw UserError{fmt::format("trace file '{}' is not valid JSON", trace_file)};
  j = TraceInReport(j, w, trace_file);
  auto trace = tir::Trace::FromJson(j);
  if (!trace) throw UserError{fmt::format("trace file '{}': {}", trace_file, trace.error().message)};
  auto sch = tir::Schedule::Replay(w, SearchTarget(target), *trace);
  if (!sch) throw UserError{fmt::format("trace file '{}' does not apply to {}: {}", trace_file, w.CanonicalText(), sch.error().message)};
  return std::move(sch).value();
}

}  // namespace autotune::cli
