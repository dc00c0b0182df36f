// A schedule as a replayable trace: instructions {kind, inputs, attrs, outputs} plus the decisions of
// the sampling instructions. Inputs are symbols defined by earlier instructions ("s3" a stage,
// "l7" a loop, "v2" a sampled integer), integer literals, or null. Traces serialize to JSON; that
// JSON is what the tuning database stores.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/result.h"

namespace autotune::tir {

// Bump when the meaning of a serialized trace changes, and say why here.
// 1: first format.
inline constexpr int kTraceFormatVersion = 1;

struct Instruction {
  std::string kind;
  nlohmann::json inputs = nlohmann::json::array();  // symbols (strings), integers or null
  nlohmann::json attrs = nlohmann::json::object();
  std::vector<std::string> outputs;
  nlohmann::json decision;  // null unless a sampling instruction
};

class Trace {
 public:
  const std::vector<Instruction>& instructions() const { return insts_; }
  void Append(Instruction inst) { insts_.push_back(std::move(inst)); }
  size_t size() const { return insts_.size(); }
  // A copy with the decision of instruction `index` replaced (mutators use this, then replay).
  Trace WithDecision(size_t index, nlohmann::json decision) const;
  // Indices of the sampling instructions (those with a decision).
  std::vector<size_t> SamplingInstructions() const;

  nlohmann::json ToJson() const;
  // ToJson().dump(), written directly: the search writes one for every candidate it breeds.
  std::string ToJsonText() const;
  static Result<Trace> FromJson(const nlohmann::json& j);
  // The same from JSON text (a stored record's trace); text that is not JSON is an error, not a throw.
  static Result<Trace> FromJsonText(const std::string& text);
  std::string ToText() const;  // one instruction a line, for humans

 private:
  std::vector<Instruction> insts_;
};

}  // namespace autotune::tir
