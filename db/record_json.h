// One tuning record as one JSON object: the line format of `autotune db export` / `import`.
//
//   {"workload":{"key","op","shape":{"M":..,"N":..,...},"epilogue","dtype","layout","flops"},
//    "target":{"kind","arch","device","driver","toolkit"},
//    "trace":<the trace's JSON object>,"trace_hash","trace_format_version",
//    "latencies_ms":[...],"median_ms","gflops","correct","max_rel_error":<number or null>,
//    "error_kind","error":<message or null>,"measured_at","autotune_version","info":<object>}
//
// Keys are written in this order and the shape in the operator's canonical order, so one record has
// one line. Reading trusts nothing: every field is checked, the workload is rebuilt from (op, shape,
// epilogue) and must have the stored key, the trace must parse and hash to the stored trace_hash.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "db/record.h"
#include "support/result.h"

namespace autotune::db {

// Fails only when the record's own JSON texts (trace_json, info_json) are not valid JSON.
Result<nlohmann::ordered_json> RecordToJson(const TuningRecord& record);
// The compact one-line text of RecordToJson.
Result<std::string> RecordToJsonLine(const TuningRecord& record);

// Rebuilding a workload costs a compute definition; an import of many records of few workloads
// passes one cache (canonical text -> rebuilt workload) to every call.
using WorkloadCache = std::unordered_map<std::string, WorkloadInfo>;

// Errors name the field ("workload.shape: ...", "trace_hash: does not match the trace").
Result<TuningRecord> RecordFromJson(const nlohmann::json& j, WorkloadCache* cache = nullptr);
Result<TuningRecord> RecordFromJsonLine(const std::string& line, WorkloadCache* cache = nullptr);

}  // namespace autotune::db
