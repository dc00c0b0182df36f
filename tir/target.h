// What a schedule is generated and measured for.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace autotune::tir {

enum class TargetKind : uint8_t { kCpu, kCuda };

inline const char* TargetKindName(TargetKind k) { return k == TargetKind::kCpu ? "cpu" : "cuda"; }
inline std::optional<TargetKind> ParseTargetKind(std::string_view s) {
  if (s == "cpu") return TargetKind::kCpu;
  if (s == "cuda") return TargetKind::kCuda;
  return std::nullopt;
}

}  // namespace autotune::tir
