// Builder: turns lowered functions into loadable artifacts, a batch at a time (so an implementation
// can compile candidates in parallel). Failures are results with an error kind, never exceptions.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "measure/measure_result.h"
#include "tir/codegen/cuda_module.h"
#include "tir/prim_func.h"

namespace autotune::measure {

// A pack function of a cpu kernel (tir/packed_layout.h): called once, untimed, before the entry, as
// entry(source, packed) with params[param]'s workload tensor; the entry then takes `packed`, of
// `packed_elements` elements of that tensor's type, in its place.
struct PackStep {
  int param = 0;
  std::string entry;
  int64_t packed_elements = 0;
};

struct BuildInput {
  tir::PrimFunc func;  // the lowered function; codegen is the builder's job
  // Ready source instead of `func` (func.body null): hand-written kernels in tests and benchmarks.
  std::string source;
  std::string entry;
  int num_params = 0;
  // cuda target, with `source`: the kernels to launch, in order (`entry` unused), and the bytes of
  // each global workspace, passed after the params (see tir/codegen/cuda_module.h).
  std::vector<tir::CudaKernelLaunch> kernels;
  std::vector<int64_t> workspace_bytes;
  std::vector<PackStep> packs;  // cpu, with `source`: its pack functions (BuildResult::packs)

  static BuildInput FromFunc(tir::PrimFunc f) {
    BuildInput in;
    in.func = std::move(f);
    return in;
  }
  static BuildInput FromSource(std::string source, std::string entry, int num_params) {
    BuildInput in;
    in.source = std::move(source);
    in.entry = std::move(entry);
    in.num_params = num_params;
    return in;
  }
  // A ready CUDA module (hand-written, or generated elsewhere).
  static BuildInput FromCudaModule(tir::CudaModule m) {
    BuildInput in;
    in.source = std::move(m.code);
    in.entry = m.kernels.empty() ? "" : m.kernels.front().entry;
    in.num_params = m.num_params;
    in.kernels = std::move(m.kernels);
    in.workspace_bytes = std::move(m.workspace_bytes);
    return in;
  }
};

struct BuildResult {
  ErrorKind error_kind = ErrorKind::kNone;  // kNone, kInvalidSchedule, kBuildError or kBuildTimeout
  std::string error_message;                // for a compile error: the compiler's log, trimmed
  std::string artifact;                     // path of the built object (cpu: a shared library; cuda: a cubin)
  std::string entry;                        // symbol of the entry function (cuda: of the first kernel)
  int num_params = 0;                       // pointer arguments of the entry (inputs, then the outputs)
  std::vector<PackStep> packs;              // cpu: inputs the entry takes packed
  std::string source;                       // the generated source, for reports and debugging
  double build_seconds = 0;
  double build_cpu_seconds = 0;             // the compiler process's CPU time (cuda); 0: not measured
  bool cached = false;                      // the artifact came from the cache
  int64_t binary_bytes = 0;                 // size of the artifact

  // ---- cuda target ----
  std::vector<tir::CudaKernelLaunch> kernels;  // launched in order; together they are one run of the candidate
  std::vector<int64_t> workspace_bytes;        // global workspaces, passed after the num_params params
  std::string log;                             // NVRTC's log (ptxas info included), trimmed
  int registers = 0;                           // registers per thread, the most of any kernel (ptxas)
  int64_t spill_bytes = 0;                     // spill stores + spill loads, all kernels together (ptxas)
  bool ok() const { return error_kind == ErrorKind::kNone; }
  // Marks this result failed, keeping what was already filled in (the source, for reports).
  BuildResult& MarkFailed(ErrorKind kind, std::string message, double seconds = 0) {
    error_kind = kind;
    error_message = std::move(message);
    build_seconds = seconds;
    return *this;
  }
  static BuildResult Failure(ErrorKind kind, std::string message) {
    BuildResult r;
    return r.MarkFailed(kind, std::move(message));
  }
};

class Builder {
 public:
  // Called once per input with its result as soon as it is built, from a compiling thread, before
  // Build returns: so a caller can run the first kernels while the batch's slowest still compile.
  using OnBuilt = std::function<void(size_t index, const BuildResult& result)>;
  virtual ~Builder() = default;
  // One result per input, in order; `on_built` (if set) sees each of them first.
  virtual std::vector<BuildResult> Build(const std::vector<BuildInput>& inputs, const OnBuilt& on_built = {}) = 0;
};

}  // namespace autotune::measure
