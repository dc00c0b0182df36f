// autotune show: the lowered TIR and the generated source of a schedule (the default one, --trace or --sketch).
#include <fmt/format.h>

#include <fstream>

#include "cli/cli_error.h"
#include "cli/command.h"
#include "cli/workload_options.h"
#include "measure/nvrtc_builder.h"
#include "tir/codegen/codegen_c.h"
#include "tir/codegen/codegen_cuda.h"
#include "tir/lower/lower.h"
#include "tir/printer.h"

namespace autotune::cli {

namespace {
// Compiles the lowered function with NVRTC (no GPU needed when the architecture is given).
void ReportCompile(const tir::PrimFunc& f, const std::string& arch) {
  measure::MeasureConfig config;
  config.cuda_arch = arch;
  measure::NvrtcBuilder builder(config);
  auto a = builder.Arch();
  if (!a) throw UserError{fmt::format("cannot compile for cuda: {}", a.error().message)};
  auto r = builder.Build({measure::BuildInput::FromFunc(f)}).at(0);
  if (!r.ok()) {
    fmt::print("// ---- NVRTC ({}): {} ----\n{}\n", *a, measure::ErrorKindName(r.error_kind), r.error_message);
    return;
  }
  fmt::print("// ---- NVRTC ({}): cubin {} bytes, {} registers per thread, {} bytes spilled, {} kernel(s), {:.3f} s{} ----\n",
             *a, r.binary_bytes, r.registers, r.spill_bytes, r.kernels.size(), r.build_seconds,
             r.cached ? " (cached)" : "");
  fmt::print("{}\n", r.log);
}

struct ShowOptions {
  WorkloadOptions wl;
  bool dump_ir = false;
  bool compile = false;
  std::string save_trace;
  std::string arch;
};
}  // namespace

CommandRun AddShowCommand(CLI::App& app) {
  auto opts = std::make_shared<ShowOptions>();
  auto* cmd = app.add_subcommand("show", "Print the lowered TIR and generated source of a schedule");
  opts->wl.AddTo(*cmd);
  cmd->add_flag("--dump-ir", opts->dump_ir, "print the IR after every lowering step");
  cmd->add_option("--save-trace", opts->save_trace, "write the schedule's trace (JSON) to this file");
  cmd->add_flag("--compile", opts->compile, "cuda: compile with NVRTC and report cubin size, registers and spills");
  cmd->add_option("--arch", opts->arch, "cuda: architecture to compile for, e.g. sm_90 (default: the local GPU's)");
  cmd->footer(
      "Examples:\n"
      "  autotune show --op gemm --shape M=128,N=128,K=64 --target cuda\n"
      "  autotune show --op conv2d --shape N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1 --target cpu --dump-ir\n"
      "  autotune show --op gemm --shape M=512,N=512,K=512 --target cuda --save-trace t.json");
  return [opts]() {
    const tir::Workload w = opts->wl.MakeWorkload();
    const tir::TargetKind target = opts->wl.Target();
    tir::Schedule sch = opts->wl.MakeSchedule(w);
    tir::LowerOptions lo;
    lo.name = "kernel_" + w.op;
    if (opts->dump_ir) {
      lo.dump = [](const std::string& step, const tir::PrimFunc& f) {
        fmt::print("// ---- after {} ----\n{}\n", step, tir::ToString(f.body));
      };
    }
    fmt::print("// workload: {}\n// target: {}\n// trace:\n", w.CanonicalText(), tir::TargetKindName(target));
    std::string trace_text = sch.trace().ToText();
    for (size_t b = 0, e; b < trace_text.size(); b = e + 1) {
      e = trace_text.find('\n', b);
      if (e == std::string::npos) e = trace_text.size();
      fmt::print("//   {}\n", trace_text.substr(b, e - b));
    }
    if (!opts->save_trace.empty()) {
      std::ofstream out(opts->save_trace);
      if (!(out << sch.trace().ToJson().dump(2) << "\n")) throw UserError{fmt::format("cannot write '{}'", opts->save_trace)};
    }
    auto f = tir::Lower(sch.state(), lo);
    if (!f) throw UserError{fmt::format("the schedule cannot be lowered: {}", f.error().message)};
    fmt::print("// ---- lowered TIR ----\n{}\n", tir::ToString(f->body));
    if (target == tir::TargetKind::kCuda) {
      auto mod = tir::CodegenCuda(*f);
      if (!mod) throw UserError{fmt::format("CUDA code generation failed: {}", mod.error().message)};
      fmt::print("// ---- CUDA source ----\n{}", mod->code);
      for (const auto& k : mod->kernels) {
        fmt::print("// launch {}: grid ({}, {}, {}), block ({}, {}, {}), dynamic shared memory {} bytes\n", k.entry,
                   k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.dynamic_shared_bytes);
      }
      if (opts->compile) ReportCompile(*f, opts->arch);
    } else {
      auto src = tir::CodegenC(*f);
      if (!src) throw UserError{fmt::format("code generation failed: {}", src.error().message)};
      fmt::print("// ---- C source ----\n{}", src->code);
    }
    return 0;
  };
}

}  // namespace autotune::cli
