// autotune measure: builds, runs, checks and times one schedule (the default one, --trace or --sketch).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_error.h"
#include "cli/command.h"
#include "cli/measure_options.h"
#include "cli/output.h"
#include "cli/workload_options.h"
#include "db/database.h"
#include "measure/c_builder.h"
#include "measure/cpu_runner.h"
#include "measure/cuda_runner.h"
#include "measure/io_dump.h"
#include "measure/nvrtc_builder.h"
#include "measure/nvrtc_compiler.h"
#include "search/measure_record.h"
#include "tir/lower/lower.h"

namespace autotune::cli {

namespace {

struct MeasureOptions {
  WorkloadOptions wl;
  std::string json_file;
  std::string db_file;
  std::string save_io_dir;
  measure::MeasureConfig config;
};

}  // namespace

CommandRun AddMeasureCommand(CLI::App& app) {
  auto opts = std::make_shared<MeasureOptions>();
  auto* cmd = app.add_subcommand(
      "measure",
      "Build, run, check and time one schedule (exit status 0: correct and timed; 1: the candidate failed)");
  opts->wl.AddTo(*cmd);
  auto& c = opts->config;
  cmd->add_option("--json", opts->json_file, "write a JSON report to this file ('-' for stdout)");
  cmd->add_option("--db", opts->db_file, "store the result in this tuning database (created if missing)");
  cmd->add_option("--seed", c.seed, "seed of the random inputs");
  cmd->add_option("--save-io", opts->save_io_dir,
                  "write the inputs and the checked run's output to this directory as .npy files, with io.json "
                  "naming them (for scripts/peer_bench.py --inputs)");
  AddMeasureOptions(*cmd, c);
  cmd->add_flag("--cuda-graph", c.cuda_graph,
                "cuda: replay each timed repeat's runs as a CUDA graph, without the gaps of back-to-back "
                "launches (as in a compiled model's graph; for kernels of a few microseconds)");
  return [opts]() {
    const tir::Workload w = opts->wl.MakeWorkload();
    if (opts->config.cuda_graph && opts->wl.Target() != tir::TargetKind::kCuda) {
      throw UserError{"--cuda-graph applies to the cuda target"};
    }
    if (opts->config.cuda_graph && !opts->db_file.empty()) {
      throw UserError{"--cuda-graph figures are not stored: a tuning database keeps one timing method (drop --db)"};
    }
    // No GPU or driver is a user-level problem with this command line: say so and stop.
    const MeasureTarget resolved = ResolveMeasureTarget(tir::TargetKindName(opts->wl.Target()), opts->config);
    const tir::TargetKind target = resolved.kind;
    const db::TargetInfo& target_info = resolved.info;
    // Open the database first: a bad path or a corrupt file should not cost a measurement.
    std::unique_ptr<db::TuningDatabase> database;
    if (!opts->db_file.empty()) {
      auto opened = db::TuningDatabase::Open(opts->db_file);
      if (!opened) throw UserError{opened.error().message};
      database = std::move(*opened);
    }
    tir::Schedule sch = opts->wl.MakeSchedule(w);
    // --save-io: the inputs are written here (MakeRandomInputs is deterministic: the same data the
    // runner makes), the output by the process that runs the candidate.
    std::string saved_output;
    if (!opts->save_io_dir.empty()) {
      std::error_code ec;
      const std::filesystem::path dir = std::filesystem::absolute(opts->save_io_dir, ec);
      if (ec) throw UserError{fmt::format("--save-io '{}': {}", opts->save_io_dir, ec.message())};
      if (auto saved = measure::SaveInputs(w, opts->config.seed, dir.string()); !saved) {
        throw UserError{saved.error().message};
      }
      saved_output = (dir / measure::kSavedOutputFile).string();
      std::filesystem::remove(saved_output, ec);  // an old one must not pass for this run's
      opts->config.save_output = saved_output;
      opts->config.save_output_shape = w.output.shape;
    }
    nlohmann::json report = {{"workload", w.CanonicalText()}, {"op", w.op}, {"epilogue", w.epilogue},
                             {"target", tir::TargetKindName(target)}, {"trace", sch.trace().ToJson()},
                             {"cuda_graph", opts->config.cuda_graph}};
    nlohmann::json shape = nlohmann::json::object();
    for (const auto& [k, v] : w.shape) shape[k] = v;
    report["shape"] = shape;

    measure::MeasureResult result;
    measure::BuildResult build;
    tir::LowerOptions lo;
    lo.name = "kernel_" + w.op;
    auto f = tir::Lower(sch.state(), lo);
    if (!f) {
      result = measure::MeasureResult::Error(measure::ErrorKind::kInvalidSchedule, f.error().message);
    } else {
      fmt::print(stderr, "autotune: building {} for {}...\n", w.CanonicalText(), tir::TargetKindName(target));
      auto builder = MakeBuilder(target, opts->config);
      auto runner = MakeRunner(target, opts->config);
      auto builds = builder->Build({measure::BuildInput::FromFunc(*f)});
      fmt::print(stderr, "autotune: checking against the reference and timing ({} repeats of >= {} ms{})...\n",
                 opts->config.repeats, opts->config.min_repeat_ms, opts->config.cuda_graph ? ", each a CUDA graph" : "");
      result = runner->Run(w, builds).at(0);
      build = builds[0];
      if (target == tir::TargetKind::kCuda && builds[0].ok()) {
        report["registers"] = builds[0].registers;
        report["spill_bytes"] = builds[0].spill_bytes;
        report["kernels"] = builds[0].kernels.size();
      }
    }
    nlohmann::json r = measure::ToJson(result, w.flops);
    for (auto& [k, v] : r.items()) report[k] = v;
    if (result.ok()) {
      fmt::print("{}  {}  {:.4f} ms (median of {}, spread {:.1f}%)  {:.2f} GFLOP/s  correct (max rel. error {:.2e})\n",
                 w.CanonicalText(), tir::TargetKindName(target), result.median_ms, result.latencies_ms.size(),
                 100 * result.spread, w.flops / (result.median_ms * 1e6), result.max_rel_error);
    } else {
      fmt::print("{}  {}  {}: {}\n", w.CanonicalText(), tir::TargetKindName(target),
                 measure::ErrorKindName(result.error_kind), result.error_message);
    }
    if (database) {
      auto stored = database->CommitBatch({search::MakeTuningRecord(w, sch.trace(), target_info, result, &build)});
      if (!stored) throw UserError{fmt::format("cannot store the result in '{}': {}", opts->db_file, stored.error().message)};
      fmt::print(stderr, "autotune: {} '{}' ({})\n", *stored ? "stored in" : "already in", opts->db_file,
                 target_info.Text());
    }
    if (!saved_output.empty()) {
      const bool have_output = std::filesystem::exists(saved_output);
      nlohmann::json io = measure::IoManifest(w, opts->config.seed, have_output);
      io["target"] = tir::TargetKindName(target);
      io["error"] = measure::ErrorKindName(result.error_kind);
      io["correct"] = result.correct;
      io["max_rel_error"] = r.value("max_rel_error", nlohmann::json());
      const std::string dir = std::filesystem::path(saved_output).parent_path().string();
      WriteOutput((std::filesystem::path(dir) / measure::kIoManifestFile).string(), io.dump(2) + "\n", "io.json");
      fmt::print(stderr, "autotune: saved the inputs{} in '{}'\n",
                 have_output ? " and the output" : " (no output: the run failed before it)", dir);
      report["save_io"] = dir;
    }
    if (!opts->json_file.empty()) WriteOutput(opts->json_file, report.dump(2) + "\n", "the JSON report");
    return result.ok() ? 0 : 1;
  };
}

}  // namespace autotune::cli
