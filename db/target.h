// Targets as the database knows them: where a record was measured (kind, architecture, device,
// driver and toolkit), and the queries that select records by target ("cuda", "cuda:sm_90", "cpu").
#pragma once

#include <string>

#include "support/result.h"

namespace autotune::db {

struct TargetInfo {
  std::string kind;     // "cpu" or "cuda"
  std::string arch;     // cuda: "sm_90"; cpu: the instruction set built for, "avx512" (measure/cpu_isa.h)
  std::string device;   // cuda: "NVIDIA H200"; cpu: the processor's model name
  std::string driver;   // cuda: driver version, "580.82"; cpu: ""
  std::string toolkit;  // cuda: NVRTC version, "13.0"; cpu: the C compiler's version line
  // "cuda:sm_90 (NVIDIA H200; driver 580.82; toolkit 13.0)"
  std::string Text() const;
  // "cuda:sm_90": what a TargetQuery names.
  std::string ShortText() const { return kind + ":" + arch; }
  bool operator==(const TargetInfo&) const = default;
};

// Selects targets by kind and, optionally, architecture. Records of one trace measured on targets that
// differ only in driver or toolkit versions count as measured on "the same target" for de-duplication
// in the search (TuningDatabase::MeasuredTraceHashes matches kind, arch and device).
struct TargetQuery {
  std::string kind;  // "cpu" or "cuda"
  std::string arch;  // "" matches any architecture
  bool Matches(const TargetInfo& t) const { return t.kind == kind && (arch.empty() || t.arch == arch); }
  std::string Text() const { return arch.empty() ? kind : kind + ":" + arch; }
};

// Parses "cpu", "cuda", "cpu:avx2", "cuda:sm_90"; anything else is an error naming the forms.
Result<TargetQuery> ParseTargetQuery(const std::string& text);

}  // namespace autotune::db
