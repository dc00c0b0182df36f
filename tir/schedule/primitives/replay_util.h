// Helpers the instruction descriptors share to read operands of a trace instruction and bind its
// outputs while replaying.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "tir/schedule/schedule.h"

namespace autotune::tir::replay {

inline Result<const nlohmann::json*> Operand(const Instruction& inst, size_t i) {
  if (i >= inst.inputs.size()) return MakeError(fmt::format("missing input {}", i));
  return &inst.inputs[i];
}

template <class RV>
Result<RV> Lookup(const std::map<std::string, RV>& table, const Instruction& inst, size_t i, const char* what) {
  auto op = Operand(inst, i);
  if (!op) return op.error();
  if (!(*op)->is_string()) return MakeError(fmt::format("input {} must be a {} symbol", i, what));
  auto it = table.find((*op)->get<std::string>());
  if (it == table.end()) return MakeError(fmt::format("input {}: undefined {} symbol '{}'", i, what, (*op)->get<std::string>()));
  return it->second;
}

inline Result<StageRV> StageAt(const Instruction& inst, size_t i, const ReplayEnv& env) {
  return Lookup(env.stages, inst, i, "stage");
}
inline Result<LoopRV> LoopAt(const Instruction& inst, size_t i, const ReplayEnv& env) {
  return Lookup(env.loops, inst, i, "loop");
}

inline Result<FactorArg> FactorAt(const Instruction& inst, size_t i, const ReplayEnv& env) {
  auto op = Operand(inst, i);
  if (!op) return op.error();
  const auto& j = **op;
  if (j.is_null()) return FactorArg{};
  if (j.is_number_integer()) return FactorArg{j.get<int64_t>()};
  auto v = Lookup(env.ints, inst, i, "integer");
  if (!v) return v.error();
  return FactorArg{*v};
}

// `j` as an integer of type T: a JSON integer in T's range. (nlohmann's get<T>() converts a float,
// and a float beyond T's range is undefined behaviour, found by the trace fuzzer.)
template <class T>
std::optional<T> IntegerOf(const nlohmann::json& j) {
  if (!j.is_number_integer()) return std::nullopt;
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return std::nullopt;
    return static_cast<T>(u);
  }
  const int64_t v = j.get<int64_t>();
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return std::nullopt;
  return static_cast<T>(v);
}

// `j` as a list of integers of type T (IntegerOf each).
template <class T>
std::optional<std::vector<T>> IntegerListOf(const nlohmann::json& j) {
  if (!j.is_array()) return std::nullopt;
  std::vector<T> out;
  for (const auto& x : j) {
    auto v = IntegerOf<T>(x);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

template <class T>
Result<T> Attr(const Instruction& inst, const char* name) {
  if (!inst.attrs.contains(name)) return MakeError(fmt::format("missing attribute '{}'", name));
  const nlohmann::json& j = inst.attrs[name];
  std::optional<T> value;
  if constexpr (std::is_integral_v<T>) {
    value = IntegerOf<T>(j);
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    value = IntegerListOf<int64_t>(j);
  } else {
    try {
      value = j.get<T>();
    } catch (const std::exception&) {
    }
  }
  if (!value) return MakeError(fmt::format("attribute '{}' has the wrong type or is out of range", name));
  return std::move(*value);
}

// The memory scope named by attribute "scope".
inline Result<Scope> ScopeAttr(const Instruction& inst) {
  auto name = Attr<std::string>(inst, "scope");
  if (!name) return name.error();
  const std::optional<Scope> scope = ParseScope(*name);
  if (!scope) return MakeError(fmt::format("unknown scope '{}'", *name));
  return *scope;
}

// The integer decision of a sampling instruction (nullopt: none recorded, sample afresh).
inline Result<std::optional<int64_t>> IntDecision(const Instruction& inst) {
  if (inst.decision.is_null()) return std::optional<int64_t>{};
  if (!inst.decision.is_number_integer()) return MakeError("decision must be an integer");
  return std::optional<int64_t>{inst.decision.get<int64_t>()};
}

inline Result<void> CheckOutputs(const Instruction& inst, size_t n) {
  if (inst.outputs.size() != n) return MakeError(fmt::format("expected {} outputs, the trace names {}", n, inst.outputs.size()));
  return {};
}

template <class RV>
Result<void> BindAll(std::map<std::string, RV>& table, const Instruction& inst, const std::vector<RV>& rvs) {
  if (auto r = CheckOutputs(inst, rvs.size()); !r) return r;
  for (size_t i = 0; i < rvs.size(); ++i) table[inst.outputs[i]] = rvs[i];
  return {};
}

}  // namespace autotune::tir::replay
