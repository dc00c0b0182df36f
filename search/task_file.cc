#include "search/task_file.h"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

#include "support/input_file.h"
#include "tir/ops/operator.h"

namespace autotune::search {
namespace {

using nlohmann::json;

// What JSON calls a value's type, for messages ("weight must be a number, not a string").
std::string TypeName(const json& v) { return v.type_name(); }

// One entry to a spec, or an error message without the "origin: entry i" prefix.
Result<TuneTaskSpec> ParseEntry(const json& entry) {
  if (!entry.is_object()) return MakeError(fmt::format("must be an object, not {}", TypeName(entry)));
  static const char* const kKeys[] = {"op", "shape", "epilogue", "dtype", "weight", "name"};
  for (const auto& [key, value] : entry.items()) {
    bool known = false;
    for (const char* k : kKeys) known |= key == k;
    if (!known) {
      return MakeError(fmt::format("unknown key '{}' (expected op, shape, epilogue, dtype, weight, name)", key));
    }
  }
  TuneTaskSpec spec;
  auto get_string = [&](const char* key, bool required, std::string& out) -> Result<void> {
    auto it = entry.find(key);
    if (it == entry.end()) {
      if (required) return MakeError(fmt::format("missing \"{}\"", key));
      return {};
    }
    if (!it->is_string()) return MakeError(fmt::format("{} must be a string, not {}", key, TypeName(*it)));
    out = it->get<std::string>();
    return {};
  };
  if (auto r = get_string("op", true, spec.op); !r) return r.error();
  if (auto r = get_string("shape", true, spec.shape); !r) return r.error();
  if (auto r = get_string("epilogue", false, spec.epilogue); !r) return r.error();
  if (auto r = get_string("name", false, spec.name); !r) return r.error();
  if (auto r = get_string("dtype", false, spec.dtype); !r) return r.error();
  if (auto it = entry.find("weight"); it != entry.end()) {
    // Booleans are not numbers to nlohmann::json, so `true` is rejected here too.
    if (!it->is_number()) return MakeError(fmt::format("weight must be a positive number, not {}", TypeName(*it)));
    const double w = it->get<double>();
    if (!std::isfinite(w) || w <= 0) return MakeError(fmt::format("weight must be a positive number, not {}", it->dump()));
    spec.weight = w;
  }
  return spec;
}

}  // namespace

Result<std::vector<TuneTaskSpec>> ParseTaskList(const std::string& json_text, const std::string& origin) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {
    // A parse_error, or out_of_range for a number too large for a double ("1e999"). e.what() is
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ...".
    std::string what = e.what();
    if (auto close = what.find("] "); what.rfind("[json.exception", 0) == 0 && close != std::string::npos) {
      what = what.substr(close + 2);
    }
    return MakeError(fmt::format("{}: not valid JSON: {}", origin, what));
  }
  if (!doc.is_array()) {
    return MakeError(fmt::format("{}: expected a JSON array of tasks [{{\"op\": ..., \"shape\": ...}}, ...], not {}",
                                 origin, TypeName(doc)));
  }
  if (doc.empty()) return MakeError(fmt::format("{}: the task list is empty", origin));

  std::vector<TuneTaskSpec> tasks;
  std::map<std::string, size_t> by_key;  // workload key -> index in `tasks`
  for (size_t i = 0; i < doc.size(); ++i) {
    const json& entry = doc[i];
    // "entry 3" or "entry 3 (layer2.0.conv1)" when the entry has a usable name.
    std::string where = fmt::format("{}: entry {}", origin, i + 1);
    if (entry.is_object()) {
      auto name = entry.find("name");
      if (name != entry.end() && name->is_string() && !name->get<std::string>().empty()) {
        where += fmt::format(" ({})", name->get<std::string>());
      }
    }
    auto spec = ParseEntry(entry);
    if (!spec) return MakeError(fmt::format("{}: {}", where, spec.error().message));
    auto workload = WorkloadOf(*spec);
    if (!workload) return MakeError(fmt::format("{}: {}", where, workload.error().message));
    const std::string key = workload->Key();
    if (auto it = by_key.find(key); it != by_key.end()) {
      TuneTaskSpec& first = tasks[it->second];
      first.weight += spec->weight;
      if (!std::isfinite(first.weight)) {
        return MakeError(fmt::format("{}: the weights of this workload add up to more than a number can hold", where));
      }
      if (first.name.empty()) first.name = spec->name;
      continue;
    }
    by_key.emplace(key, tasks.size());
    tasks.push_back(std::move(*spec));
  }
  return tasks;
}

Result<std::vector<TuneTaskSpec>> LoadTaskFile(const std::string& path) {
  // A network's task list is kilobytes; a limit keeps a wrong path (a disk image, /dev/zero) out.
  auto text = ReadInputFile(path, 16 * kMiB);
  if (!text) return MakeError(fmt::format("cannot read task file '{}': {}", path, text.error().message));
  return ParseTaskList(*text, path);
}

std::string TaskListJson(const std::vector<TuneTaskSpec>& tasks) {
  std::string out = "[\n";
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TuneTaskSpec& t = tasks[i];
    // ordered_json keeps the keys in the order a reader expects: what, then how much, then which.
    nlohmann::ordered_json entry = {{"op", t.op}, {"shape", t.shape}};
    if (!t.epilogue.empty()) entry["epilogue"] = t.epilogue;
    if (t.dtype != "float32") entry["dtype"] = t.dtype;
    // A count of layers reads as one (2, not 2.0); a fractional weight keeps its digits.
    if (t.weight == std::floor(t.weight) && std::fabs(t.weight) < 1e15) entry["weight"] = static_cast<int64_t>(t.weight);
    else entry["weight"] = t.weight;
    if (!t.name.empty()) entry["name"] = t.name;
    out += " " + entry.dump() + (i + 1 < tasks.size() ? ",\n" : "\n");
  }
  return out + "]\n";
}

}  // namespace autotune::search
