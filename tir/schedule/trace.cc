#include "tir/schedule/trace.h"

#include <fmt/format.h>

namespace autotune::tir {

using nlohmann::json;

Trace Trace::WithDecision(size_t index, json decision) const {
  Trace t = *this;
  if (index < t.insts_.size()) t.insts_[index].decision = std::move(decision);
  return t;
}

std::vector<size_t> Trace::SamplingInstructions() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < insts_.size(); ++i) {
    if (!insts_[i].decision.is_null()) out.push_back(i);
  }
  return out;
}

json Trace::ToJson() const {
  json insts = json::array();
  for (const auto& in : insts_) {
    json j = {{"kind", in.kind}, {"inputs", in.inputs}, {"outputs", in.outputs}};
    if (!in.attrs.empty()) j["attrs"] = in.attrs;
    if (!in.decision.is_null()) j["decision"] = in.decision;
    insts.push_back(std::move(j));
  }
  return {{"format_version", kTraceFormatVersion}, {"instructions", std::move(insts)}};
}

std::string Trace::ToJsonText() const {
  std::string out = fmt::format("{{\"format_version\":{},\"instructions\":[", kTraceFormatVersion);
  for (size_t i = 0; i < insts_.size(); ++i) {
    const Instruction& in = insts_[i];
    out += i == 0 ? "{" : ",{";
    // Keys in the order nlohmann's objects keep them: sorted.
    if (!in.attrs.empty()) out += "\"attrs\":" + in.attrs.dump() + ",";
    if (!in.decision.is_null()) out += "\"decision\":" + in.decision.dump() + ",";
    out += "\"inputs\":" + in.inputs.dump() + ",\"kind\":" + json(in.kind).dump() + ",\"outputs\":[";
    for (size_t k = 0; k < in.outputs.size(); ++k) {
      if (k > 0) out += ',';
      out += json(in.outputs[k]).dump();
    }
    out += "]}";
  }
  return out + "]}";
}

Result<Trace> Trace::FromJsonText(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError("the trace is not valid JSON");
  return FromJson(j);
}

Result<Trace> Trace::FromJson(const json& j) {
  if (!j.is_object() || !j.contains("instructions") || !j["instructions"].is_array()) {
    return MakeError("trace JSON must be an object with an \"instructions\" array");
  }
  if (j.contains("format_version") && j["format_version"] != kTraceFormatVersion) {
    return MakeError(fmt::format("trace format version {} is not supported (expected {})", j["format_version"].dump(),
                                 kTraceFormatVersion));
  }
  // Real traces hold tens to a few hundred instructions; a bound keeps a hostile file from costing
  // minutes of replay.
  constexpr size_t kMaxInstructions = 10000;
  if (j["instructions"].size() > kMaxInstructions) {
    return MakeError(fmt::format("trace has {} instructions (at most {} are accepted)", j["instructions"].size(),
                                 kMaxInstructions));
  }
  Trace t;
  size_t n = 0;
  for (const auto& ij : j["instructions"]) {
    ++n;
    if (!ij.is_object() || !ij.contains("kind") || !ij["kind"].is_string()) {
      return MakeError(fmt::format("trace instruction {} has no \"kind\" string", n));
    }
    Instruction in;
    in.kind = ij["kind"].get<std::string>();
    if (ij.contains("inputs")) {
      if (!ij["inputs"].is_array()) return MakeError(fmt::format("trace instruction {}: \"inputs\" is not an array", n));
      for (const auto& x : ij["inputs"]) {
        if (!(x.is_string() || x.is_number_integer() || x.is_null())) {
          return MakeError(fmt::format("trace instruction {}: inputs must be symbols, integers or null", n));
        }
      }
      in.inputs = ij["inputs"];
    }
    if (ij.contains("attrs")) {
      if (!ij["attrs"].is_object()) return MakeError(fmt::format("trace instruction {}: \"attrs\" is not an object", n));
      in.attrs = ij["attrs"];
    }
    if (ij.contains("outputs")) {
      if (!ij["outputs"].is_array()) return MakeError(fmt::format("trace instruction {}: \"outputs\" is not an array", n));
      for (const auto& o : ij["outputs"]) {
        if (!o.is_string()) return MakeError(fmt::format("trace instruction {}: outputs must be symbols", n));
        in.outputs.push_back(o.get<std::string>());
      }
    }
    if (ij.contains("decision")) in.decision = ij["decision"];
    t.insts_.push_back(std::move(in));
  }
  return t;
}

std::string Trace::ToText() const {
  std::string s;
  for (const auto& in : insts_) {
    std::string outs;
    for (const auto& o : in.outputs) outs += (outs.empty() ? "" : ", ") + o;
    if (!outs.empty()) outs += " = ";
    s += fmt::format("{}{}({}", outs, in.kind, in.inputs.dump());
    if (!in.attrs.empty()) s += ", " + in.attrs.dump();
    s += ")";
    if (!in.decision.is_null()) s += "  # decision " + in.decision.dump();
    s += "\n";
  }
  return s;
}

}  // namespace autotune::tir
