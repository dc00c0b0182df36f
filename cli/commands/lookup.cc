// autotune lookup: the lookup library's answer from the command line (the same code answers both).
#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "cli/cli_error.h"
#include "cli/workload_options.h"
#include "cli/command.h"
#include "cli/output.h"
#include "db/lookup/kernel_lookup.h"
#include "support/input_file.h"

namespace autotune::cli {

namespace {

struct LookupOptions {
  std::string db = "autotune.db";
  std::string dtype = "float32";
  std::string precision = "ieee";
  std::string op, shape, epilogue, target;
  bool nearest = false;
  std::string json_file;
  std::string source_file;
};

nlohmann::json AnswerJson(const db::LookupAnswer& a) {
  nlohmann::json launches = nlohmann::json::array();
  for (const auto& l : a.kernel.launches) {
    launches.push_back({{"entry", l.entry}, {"grid", l.grid}, {"block", l.block},
                        {"dynamic_shared_bytes", l.dynamic_shared_bytes}});
  }
  nlohmann::json packs = nlohmann::json::array();
  for (const auto& p : a.kernel.packs) {
    packs.push_back({{"tensor", p.param}, {"entry", p.entry}, {"shape", p.shape}});
  }
  return {{"exact", a.exact},
          {"requested", a.requested},
          {"measured_workload", a.measured},
          {"target", a.target},
          {"latency_ms", a.latency_ms},
          {"gflops", a.gflops},
          {"estimated_latency_ms", a.estimated_latency_ms},
          {"shape_distance", a.shape_distance},
          {"language", a.kernel.language},
          {"launches", launches},
          {"num_params", a.kernel.num_params},
          {"workspace_bytes", a.kernel.workspace_bytes},
          {"packs", packs},
          {"source", a.kernel.code},
          {"trace", nlohmann::json::parse(a.trace_json)}};
}

}  // namespace

CommandRun AddLookupCommand(CLI::App& app) {
  auto opts = std::make_shared<LookupOptions>();
  auto* cmd = app.add_subcommand(
      "lookup",
      "Fetch the best kernel of a workload from a tuning database, as the lookup library does "
      "(exit status 0: found; 1: no answer)");
  cmd->add_option("--db", opts->db, "tuning database (opened read-only)")->capture_default_str();
  cmd->add_option("--op", opts->op, "operator (see `autotune ops`)")->required();
  cmd->add_option("--shape", opts->shape, "shape parameters, e.g. M=1024,N=1024,K=1024")->required();
  cmd->add_option("--epilogue", opts->epilogue, kEpilogueHelp);
  cmd->add_option("--dtype", opts->dtype, "element type: float32, float16 or bfloat16");
  cmd->add_option("--precision", opts->precision, kPrecisionHelp);
  cmd->add_option("--target", opts->target, "cpu, cuda, or kind:arch such as cuda:sm_90")->required();
  cmd->add_flag("--nearest", opts->nearest,
                "without a record of this exact shape, adapt the best traces of the nearest shapes");
  AddJsonOption(*cmd, opts->json_file, "the answer");
  cmd->add_option("--source", opts->source_file, "write the kernel source to this file ('-' for stdout)");
  cmd->footer(
      "Examples:\n"
      "  autotune lookup --db autotune.db --op gemm --shape M=512,N=512,K=512 --target cuda\n"
      "  autotune lookup --db autotune.db --op gemm --shape M=500,N=512,K=512 --target cpu --nearest --source k.c --json");
  return [opts]() {
    if (auto c = CheckInputFile(opts->db, INT64_MAX); !c) {
      throw UserError{fmt::format("cannot open the database '{}': {}", opts->db, c.error().message)};
    }
    auto lookup = db::KernelLookup::Open(opts->db);
    if (!lookup) throw UserError{lookup.error().message};
    db::LookupResult r =
        (*lookup)->Find({opts->op, opts->shape, opts->epilogue, opts->target, opts->nearest,
                                NumberTypeName(opts->dtype, opts->precision)});
    if (r.status == db::LookupStatus::kInvalidArgument) throw UserError{r.message};
    if (r.status == db::LookupStatus::kNotFound) {
      if (!opts->json_file.empty()) WriteOutput(opts->json_file, nlohmann::json{{"error", r.message}}.dump(2) + "\n", "the JSON answer");
      fmt::print(stderr, "autotune: {}{}\n", r.message, opts->nearest ? "" : " (--nearest allows an approximate answer)");
      return 1;
    }
    const db::LookupAnswer& a = *r.answer;
    if (opts->json_file != "-") {
      fmt::print("{}: {} answer from {} on {}\n", a.requested, a.exact ? "exact" : "approximate", a.measured, a.target);
      fmt::print("  measured {:.4f} ms, {:.1f} GFLOP/s{}\n", a.latency_ms, a.gflops,
                 a.exact ? "" : fmt::format("; estimated {:.4f} ms at this shape", a.estimated_latency_ms));
      fmt::print("  {} source, {} bytes; {} tensor params, {} workspaces\n", a.kernel.language, a.kernel.code.size(),
                 a.kernel.num_params, a.kernel.workspace_bytes.size());
      for (size_t i = 0; i < a.kernel.launches.size(); ++i) {
        const auto& l = a.kernel.launches[i];
        fmt::print("  launch {}: {} grid ({},{},{}) block ({},{},{}) dynamic shared {} bytes\n", i, l.entry, l.grid[0],
                   l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2], l.dynamic_shared_bytes);
      }
      for (const auto& p : a.kernel.packs) {
        fmt::print("  takes tensor {} packed: {}(tensor, packed) makes it, shape ({}), once\n", p.param, p.entry,
                   fmt::join(p.shape, ","));
      }
    }
    if (!opts->json_file.empty()) WriteOutput(opts->json_file, AnswerJson(a).dump(2) + "\n", "the JSON answer");
    if (!opts->source_file.empty()) WriteOutput(opts->source_file, a.kernel.code, "the kernel source");
    return 0;
  };
}

}  // namespace autotune::cli
