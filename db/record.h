// A tuning record: one measured (workload, target, trace) with its latencies or its error, as the
// database stores it and `db export` writes it. db/ depends on tir only, so error kinds are the
// measure module's names as text ("NONE", "BUILD_ERROR", ...) and the search converts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/target.h"
#include "tir/ops/workload.h"

namespace autotune::db {

// The workload columns: the persistent key and what it was made from, enough to rebuild it with
// tir::MakeWorkload(op, ShapeText(), epilogue).
struct WorkloadInfo {
  std::string key;  // tir::Workload::Key(): SHA-256 hex of the key text
  std::string op;
  tir::ShapeParams shape;  // canonical order
  std::string epilogue;    // "", "bias", "relu", "bias,relu"
  std::string dtype = "float32";
  std::string layout;
  double flops = 0;

  static WorkloadInfo From(const tir::Workload& w);
  std::string ShapeText() const;      // "M=128,N=64,K=32"
  std::string CanonicalText() const;  // "gemm[M=128,N=64,K=32]+relu:float16", as tir::Workload prints it
  bool operator==(const WorkloadInfo&) const = default;
};

struct TuningRecord {
  WorkloadInfo workload;
  TargetInfo target;
  // Compact JSON of tir::Trace::ToJson() (nlohmann's dump(): object keys sorted, so one trace has
  // one text); trace_hash is its SHA-256 hex. Together with the workload and target it identifies
  // the record: a trace is never stored (nor measured) twice on one target.
  std::string trace_json;
  std::string trace_hash;
  int trace_format_version = 0;  // tir::kTraceFormatVersion when measured
  std::vector<double> latencies_ms;  // every timed repeat (empty on error)
  double median_ms = 0;              // 0 on error
  double gflops = 0;                 // 0 on error
  bool correct = false;
  std::optional<double> max_rel_error;  // nullopt: not checked, or not finite
  std::string error_kind = "NONE";       // measure::ErrorKindName
  std::string error_message;
  std::string measured_at;               // ISO-8601 UTC, e.g. "2026-11-29T09:37:21Z"
  std::string autotune_version;          // autotune::kVersion of the process that measured
  // Details that are not columns (registers, spill bytes, build and run seconds, ...): a JSON object.
  std::string info_json = "{}";

  bool valid() const { return error_kind == "NONE" && correct; }
  bool operator==(const TuningRecord&) const = default;
};

// SHA-256 hex of a trace's compact JSON text.
std::string HashTraceJson(const std::string& trace_json);
// Now as ISO-8601 UTC ("2026-11-29T09:37:21Z").
std::string NowIso8601();
// Seconds since the Unix epoch of a time in NowIso8601's exact form (what measured_at holds), so
// reports can measure how long tuning took; nullopt for any other text.
std::optional<int64_t> ParseIso8601(const std::string& text);

}  // namespace autotune::db
