// Builder: turns lowered functions into loadable artifacts, a batch at a time (so an implementation
// can compile candidates in parallel). Failures are results with an error kind, never exceptions.
#pragma once

#include <string>
#include <vector>

#include "measure/measure_result.h"
#include "tir/prim_func.h"

namespace autotune::measure {

struct BuildInput {
  tir::PrimFunc func;  // the lowered function; codegen is the builder's job
  // Ready source instead of `func` (func.body null): hand-written kernels in tests and benchmarks.
  std::string source;
  std::string entry;
  int num_params = 0;

  static BuildInput FromFunc(tir::PrimFunc f) { return BuildInput{std::move(f), "", "", 0}; }
  static BuildInput FromSource(std::string source, std::string entry, int num_params) {
    return BuildInput{{}, std::move(source), std::move(entry), num_params};
  }
};

struct BuildResult {
  ErrorKind error_kind = ErrorKind::kNone;  // kNone, kInvalidSchedule, kBuildError or kBuildTimeout
  std::string error_message;                // for a compile error: the compiler's log, trimmed
  std::string artifact;                     // path of the built object (a shared library for cpu)
  std::string entry;                        // symbol of the entry function
  int num_params = 0;                       // pointer arguments of the entry (inputs, then the output)
  std::string source;                       // the generated source, for reports and debugging
  double build_seconds = 0;
  bool cached = false;                      // the artifact came from the cache
  bool ok() const { return error_kind == ErrorKind::kNone; }
};

class Builder {
 public:
  virtual ~Builder() = default;
  // One result per input, in order.
  virtual std::vector<BuildResult> Build(const std::vector<BuildInput>& inputs) = 0;
};

}  // namespace autotune::measure
