#include "db/record_json.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "tir/ops/operator.h"
#include "tir/schedule/trace.h"

namespace autotune::db {

using nlohmann::json;
using nlohmann::ordered_json;

Result<ordered_json> RecordToJson(const TuningRecord& r) {
  // ordered_json: the keys come out in the documented order, the shape in canonical order. The
  // trace and info objects are parsed from their stored (sorted) text, so they keep that order.
  ordered_json trace = ordered_json::parse(r.trace_json, nullptr, /*allow_exceptions=*/false);
  if (trace.is_discarded()) return MakeError(fmt::format("trace {}: stored trace is not valid JSON", r.trace_hash));
  ordered_json info = ordered_json::parse(r.info_json, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object()) return MakeError(fmt::format("trace {}: stored info is not a JSON object", r.trace_hash));

  ordered_json shape = ordered_json::object();
  for (const auto& [name, value] : r.workload.shape) shape[name] = value;
  ordered_json j;
  j["workload"] = {{"key", r.workload.key},           {"op", r.workload.op},       {"shape", std::move(shape)},
                   {"epilogue", r.workload.epilogue}, {"dtype", r.workload.dtype}, {"layout", r.workload.layout},
                   {"flops", r.workload.flops}};
  j["target"] = {{"kind", r.target.kind},
                 {"arch", r.target.arch},
                 {"device", r.target.device},
                 {"driver", r.target.driver},
                 {"toolkit", r.target.toolkit}};
  j["trace"] = std::move(trace);
  j["trace_hash"] = r.trace_hash;
  j["trace_format_version"] = r.trace_format_version;
  j["latencies_ms"] = r.latencies_ms;
  j["median_ms"] = r.median_ms;
  j["gflops"] = r.gflops;
  j["correct"] = r.correct;
  j["max_rel_error"] = r.max_rel_error ? ordered_json(*r.max_rel_error) : ordered_json(nullptr);
  j["error_kind"] = r.error_kind;
  j["error"] = r.error_message.empty() ? ordered_json(nullptr) : ordered_json(r.error_message);
  j["measured_at"] = r.measured_at;
  j["autotune_version"] = r.autotune_version;
  j["info"] = std::move(info);
  return j;
}

Result<std::string> RecordToJsonLine(const TuningRecord& record) {
  auto j = RecordToJson(record);
  if (!j) return j.error();
  // Text from outside (a compiler's message) may hold bytes that are not UTF-8: they are written as
  // U+FFFD rather than failing the export.
  return j->dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

namespace {

// Reads typed fields and keeps the first problem; later reads after a problem return defaults, so
// the parser reads straight through and checks once at the end.
class FieldReader {
 public:
  const json* Get(const json& obj, const std::string& name) {
    if (error_) return nullptr;
    auto it = obj.find(LastPart(name));
    if (it == obj.end()) {
      Fail(name, "is missing");
      return nullptr;
    }
    return &*it;
  }
  std::string String(const json& obj, const std::string& name) {
    const json* v = Get(obj, name);
    if (!v) return {};
    if (!v->is_string()) return Wrong(name, "a string"), std::string();
    return v->get<std::string>();
  }
  // A string, or null for "".
  std::string StringOrNull(const json& obj, const std::string& name) {
    const json* v = Get(obj, name);
    if (!v || v->is_null()) return {};
    if (!v->is_string()) return Wrong(name, "a string or null"), std::string();
    return v->get<std::string>();
  }
  // Finite: the database stores no NaN or infinity (and JSON writes them as null).
  double Number(const json& obj, const std::string& name) {
    const json* v = Get(obj, name);
    if (!v) return 0;
    if (!v->is_number() || !std::isfinite(v->get<double>())) return Wrong(name, "a finite number"), 0.0;
    return v->get<double>();
  }
  std::optional<double> NumberOrNull(const json& obj, const std::string& name) {
    const json* v = Get(obj, name);
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_number() || !std::isfinite(v->get<double>()))
      return Wrong(name, "a finite number or null"), std::nullopt;
    return v->get<double>();
  }
  int64_t Integer(const json& obj, const std::string& name) {
    const json* v = Get(obj, name);
    if (!v) return 0;
    if (!v->is_number_integer()) return Wrong(name, "an integer"), 0;
    return v->get<int64_t>();
  }
  bool Bool(const json& obj, const std::string& name) {
    const json* v = Get(obj, name);
    if (!v) return false;
    if (!v->is_boolean()) return Wrong(name, "true or false"), false;
    return v->get<bool>();
  }
  // An object, or an empty one after a problem (so reading on is harmless).
  const json& Object(const json& obj, const std::string& name) {
    static const json kEmpty = json::object();
    const json* v = Get(obj, name);
    if (!v) return kEmpty;
    if (!v->is_object()) return Wrong(name, "an object"), kEmpty;
    return *v;
  }
  const json& Array(const json& obj, const std::string& name) {
    static const json kEmpty = json::array();
    const json* v = Get(obj, name);
    if (!v) return kEmpty;
    if (!v->is_array()) return Wrong(name, "an array"), kEmpty;
    return *v;
  }

  void Fail(const std::string& name, const std::string& why) {
    if (!error_) error_ = MakeError(fmt::format("{}: {}", name, why));
  }
  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }

 private:
  void Wrong(const std::string& name, const char* expected) { Fail(name, std::string("must be ") + expected); }
  // "workload.key" is looked up as "key" in the workload object.
  static std::string LastPart(const std::string& name) {
    const auto dot = name.rfind('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
  }
  std::optional<Error> error_;
};

// The workload of a line, rebuilt by tir from (op, shape, epilogue): the stored key must be the key
// of what the text describes, and dtype and layout must agree with it.
Result<WorkloadInfo> RebuildWorkload(FieldReader& f, const json& wj, WorkloadCache* cache) {
  WorkloadInfo given;
  given.key = f.String(wj, "workload.key");
  given.op = f.String(wj, "workload.op");
  const json& shape = f.Object(wj, "workload.shape");
  given.epilogue = f.String(wj, "workload.epilogue");
  given.dtype = f.String(wj, "workload.dtype");
  given.layout = f.String(wj, "workload.layout");
  given.flops = f.Number(wj, "workload.flops");
  std::string shape_text;
  for (const auto& [name, value] : shape.items()) {
    if (!value.is_number_integer()) f.Fail("workload.shape." + name, "must be an integer");
    shape_text += fmt::format("{}{}={}", shape_text.empty() ? "" : ",", name, value.dump());
  }
  if (!f.ok()) return f.error();

  const std::string cache_key = given.op + "[" + shape_text + "]+" + given.epilogue + ":" + given.dtype;
  WorkloadInfo built;
  const auto hit = cache ? cache->find(cache_key) : WorkloadCache::iterator();
  if (cache && hit != cache->end()) {
    built = hit->second;
  } else {
    auto w = tir::MakeWorkload(given.op, shape_text, given.epilogue, given.dtype);
    if (!w) return MakeError(fmt::format("workload: {}", w.error().message));
    built = WorkloadInfo::From(*w);
    if (cache) cache->emplace(cache_key, built);
  }
  if (built.key != given.key) {
    return MakeError(
        fmt::format("workload.key: {} is not the key of {} ({})", given.key, built.CanonicalText(), built.key));
  }
  if (built.dtype != given.dtype)
    return MakeError(fmt::format("workload.dtype: '{}' but the key says '{}'", given.dtype, built.dtype));
  if (built.layout != given.layout) {
    return MakeError(fmt::format("workload.layout: '{}' but the key says '{}'", given.layout, built.layout));
  }
  // flops is data of the record (as measured), not recomputed: a later change of the FLOP count
  // formula must not make old exports unreadable.
  built.flops = given.flops;
  return built;
}

}  // namespace

Result<TuningRecord> RecordFromJson(const json& j, WorkloadCache* cache) {
  if (!j.is_object()) return MakeError("a record must be a JSON object");
  FieldReader f;
  TuningRecord r;
  const json& wj = f.Object(j, "workload");
  if (!f.ok()) return f.error();
  auto w = RebuildWorkload(f, wj, cache);
  if (!w) return w.error();
  r.workload = std::move(*w);

  const json& tj = f.Object(j, "target");
  r.target.kind = f.String(tj, "target.kind");
  r.target.arch = f.String(tj, "target.arch");
  r.target.device = f.String(tj, "target.device");
  r.target.driver = f.String(tj, "target.driver");
  r.target.toolkit = f.String(tj, "target.toolkit");
  if (f.ok() && r.target.kind.empty()) f.Fail("target.kind", "is empty");

  const json& trace = f.Object(j, "trace");
  r.trace_hash = f.String(j, "trace_hash");
  r.trace_format_version = static_cast<int>(f.Integer(j, "trace_format_version"));
  for (const auto& x : f.Array(j, "latencies_ms")) {
    if (!x.is_number() || !std::isfinite(x.get<double>())) f.Fail("latencies_ms", "must hold finite numbers only");
    if (f.ok()) r.latencies_ms.push_back(x.get<double>());
  }
  r.median_ms = f.Number(j, "median_ms");
  r.gflops = f.Number(j, "gflops");
  r.correct = f.Bool(j, "correct");
  r.max_rel_error = f.NumberOrNull(j, "max_rel_error");
  r.error_kind = f.String(j, "error_kind");
  r.error_message = f.StringOrNull(j, "error");
  r.measured_at = f.String(j, "measured_at");
  r.autotune_version = f.String(j, "autotune_version");
  const json& info = f.Object(j, "info");
  if (!f.ok()) return f.error();
  if (r.error_kind.empty()) return MakeError("error_kind: is empty");

  if (auto t = tir::Trace::FromJson(trace); !t) return MakeError(fmt::format("trace: {}", t.error().message));
  // The stored text is nlohmann's compact dump (keys sorted): the same text the trace was hashed from.
  r.trace_json = trace.dump();
  if (HashTraceJson(r.trace_json) != r.trace_hash) {
    return MakeError(
        fmt::format("trace_hash: {} is not the hash of the trace ({})", r.trace_hash, HashTraceJson(r.trace_json)));
  }
  r.info_json = info.dump();
  return r;
}

Result<TuningRecord> RecordFromJsonLine(const std::string& line, WorkloadCache* cache) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError("not valid JSON");
  return RecordFromJson(j, cache);
}

}  // namespace autotune::db
