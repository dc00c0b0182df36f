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

// The vector registers a cpu schedule's register tiles are sized for: the instruction set's
// (measure/cpu_isa.h; AVX-512's 32 registers of 16 float32 lanes unless a target names another).
struct CpuVectors {
  int float_lanes = 16;
  int registers = 32;
  bool operator==(const CpuVectors&) const = default;
};

// A target kind and, for cpu, its vector registers. Converts to and from the kind, so code that only
// asks which kind it is reads as before.
struct Target {
  TargetKind kind = TargetKind::kCpu;
  CpuVectors cpu;
  Target(TargetKind k = TargetKind::kCpu, CpuVectors c = {}) : kind(k), cpu(c) {}  // NOLINT: implicit
  operator TargetKind() const { return kind; }                                      // NOLINT: implicit
};

}  // namespace autotune::tir
