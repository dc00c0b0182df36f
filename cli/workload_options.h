// Options shared by the commands that act on one workload and one schedule: --op, --shape,
// --epilogue, --dtype, --precision, --target, --trace and --sketch, and turning them into a workload and a
// schedule.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tir/ops/workload.h"
#include "tir/schedule/schedule.h"
#include "tir/target.h"

namespace autotune::cli {

// The help of every --epilogue option.
inline constexpr const char* kEpilogueHelp =
    "fused epilogue, parts applied in order: bias, scale, shift (per channel), residual (an input of the output's "
    "shape), relu, relu6, gelu, gelu_tanh, silu; e.g. scale,shift,residual,relu";

inline constexpr const char* kPrecisionHelp =
    "how float32 products of gemm, batch_matmul and convolutions (conv1d/2d/3d) are computed: ieee (float32 multiplies, the default), tf32 "
    "(inputs rounded to TF32 on tensor cores; checked against a reference of the rounded inputs) or 3xtf32 (three "
    "TF32 tensor-core products, float32's accuracy)";

// The workload type name of --dtype and --precision together ("float32" + "tf32" -> "tf32"); throws
// UserError when they do not go together.
std::string NumberTypeName(const std::string& dtype, const std::string& precision);

struct WorkloadOptions {
  std::string op;
  std::string shape;
  std::string epilogue;
  std::string dtype = "float32";
  std::string precision = "ieee";
  std::string target = "cpu";
  std::string trace_file;
  std::string sketch;  // --sketch: that sketch's hand-picked schedule instead of the default

  void AddTo(CLI::App& cmd, bool with_target_default_cpu = true);
  // These throw UserError with a message that names the problem.
  tir::Workload MakeWorkload() const;
  tir::TargetKind Target() const;
  // The schedule from --trace, the hand-picked schedule of --sketch, or the default schedule of the
  // workload on the target.
  tir::Schedule MakeSchedule(const tir::Workload& w) const;
};

}  // namespace autotune::cli
