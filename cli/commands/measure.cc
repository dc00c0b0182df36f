// autotune measure: builds, runs, checks and times one schedule (the default one, --trace or --sketch).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_error.h"
#include "cli/command.h"
#include "cli/number_checks.h"
#include "cli/measure_options.h"
#include "cli/open_database.h"
#include "cli/output.h"
#include "cli/target_option.h"
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

// What one build-and-run gave, with the details the report adds for cuda kernels.
struct Measured {
  measure::MeasureResult result;
  measure::BuildResult build;
};

void CheckMeasureOptions(const MeasureOptions& o) {
  if (o.config.cuda_graph && o.wl.Target() != tir::TargetKind::kCuda) {
    throw UserError{"--cuda-graph applies to the cuda target"};
  }
  if (o.config.cuda_graph && !o.db_file.empty()) {
    throw UserError{"--cuda-graph figures are not stored: a tuning database keeps one timing method (drop --db)"};
  }
}

// --save-io: the inputs are written here (MakeRandomInputs is deterministic: the same data the runner
// makes), the outputs by the process that runs the candidate. Returns the output's path.
std::string PrepareSaveIo(const std::string& save_io_dir, const tir::Workload& w, measure::MeasureConfig& config) {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(save_io_dir, ec);
  if (ec) throw UserError{fmt::format("--save-io '{}': {}", save_io_dir, ec.message())};
  if (auto saved = measure::SaveInputs(w, config.seed, dir.string()); !saved) throw UserError{saved.error().message};
  const std::vector<tir::TensorSpec> outputs = w.Outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = (dir / measure::SavedOutputFile(w, i)).string();
    std::filesystem::remove(path, ec);  // an old one must not pass for this run's
    config.save_outputs.push_back({path, outputs[i].shape});
  }
  return config.save_outputs.back().path;
}

Measured BuildAndRun(const tir::Workload& w, const tir::Schedule& sch, tir::TargetKind target,
                     const measure::MeasureConfig& config, nlohmann::json& report) {
  tir::LowerOptions lo;
  lo.name = "kernel_" + w.op;
  auto f = tir::Lower(sch.state(), lo);
  if (!f) return {measure::MeasureResult::Error(measure::ErrorKind::kInvalidSchedule, f.error().message), {}};
  fmt::print(stderr, "autotune: building {} for {}...\n", w.CanonicalText(), tir::TargetKindName(target));
  auto builds = MakeBuilder(target, config)->Build({measure::BuildInput::FromFunc(*f)});
  fmt::print(stderr, "autotune: checking against the reference and timing ({} repeats of >= {} ms{})...\n",
             config.repeats, config.min_repeat_ms, config.cuda_graph ? ", each a CUDA graph" : "");
  Measured m{MakeRunner(target, config)->Run(w, builds).at(0), builds[0]};
  if (target == tir::TargetKind::kCuda && m.build.ok()) {
    report["registers"] = m.build.registers;
    report["spill_bytes"] = m.build.spill_bytes;
    report["kernels"] = m.build.kernels.size();
  }
  return m;
}

void PrintResult(std::FILE* out, const tir::Workload& w, tir::TargetKind target, const measure::MeasureResult& r) {
  if (r.ok()) {
    fmt::print(out, "{}  {}  {:.4f} ms (median of {}, spread {:.1f}%)  {:.2f} GFLOP/s  correct (max rel. error {:.2e})\n",
               w.CanonicalText(), tir::TargetKindName(target), r.median_ms, r.latencies_ms.size(), 100 * r.spread,
               w.flops / (r.median_ms * 1e6), r.max_rel_error);
  } else {
    fmt::print(out, "{}  {}  {}: {}\n", w.CanonicalText(), tir::TargetKindName(target),
               measure::ErrorKindName(r.error_kind), r.error_message);
  }
}

// io.json beside the saved tensors: what each file is, and how the run that wrote them ended.
void WriteIoManifest(const std::string& saved_output, const tir::Workload& w, const MeasureOptions& o,
                     tir::TargetKind target, const measure::MeasureResult& result, nlohmann::json& report) {
  const bool have_output = std::filesystem::exists(saved_output);
  nlohmann::json io = measure::IoManifest(w, o.config.seed, have_output);
  io["target"] = tir::TargetKindName(target);
  io["error"] = measure::ErrorKindName(result.error_kind);
  io["correct"] = result.correct;
  io["max_rel_error"] = report.value("max_rel_error", nlohmann::json());
  const std::string dir = std::filesystem::path(saved_output).parent_path().string();
  WriteOutput((std::filesystem::path(dir) / measure::kIoManifestFile).string(), io.dump(2) + "\n", "io.json");
  fmt::print(stderr, "autotune: saved the inputs{} in '{}'\n",
             have_output ? " and the output" : " (no output: the run failed before it)", dir);
  report["save_io"] = dir;
}

nlohmann::json ReportHeader(const tir::Workload& w, const tir::Schedule& sch, tir::TargetKind target, bool cuda_graph) {
  nlohmann::json shape = nlohmann::json::object();
  for (const auto& [k, v] : w.shape) shape[k] = v;
  return {{"workload", w.CanonicalText()}, {"op", w.op}, {"epilogue", w.epilogue}, {"shape", shape},
          {"target", tir::TargetKindName(target)}, {"trace", sch.trace().ToJson()}, {"cuda_graph", cuda_graph}};
}

int RunMeasure(MeasureOptions& o) {
  const tir::Workload w = o.wl.MakeWorkload();
  CheckMeasureOptions(o);
  // No GPU or driver is a user-level problem with this command line: say so and stop.
  const MeasureTarget target = ResolveMeasureTarget(TakeTargetOption(o.wl.target, o.config, false), o.config);
  // Open the database first: a bad path or a corrupt file should not cost a measurement.
  std::unique_ptr<db::TuningDatabase> database;
  if (!o.db_file.empty()) database = OpenDatabase(o.db_file, db::OpenMode::kReadWrite);
  const tir::Schedule sch = o.wl.MakeSchedule(w);
  const std::string saved_output = o.save_io_dir.empty() ? "" : PrepareSaveIo(o.save_io_dir, w, o.config);

  WarnIfHostBusy(target, o.config);
  nlohmann::json report = ReportHeader(w, sch, target.kind, o.config.cuda_graph);
  const Measured m = BuildAndRun(w, sch, target.kind, o.config, report);
  const nlohmann::json result = measure::ToJson(m.result, w.flops);  // kept alive for items()
  for (const auto& [k, v] : result.items()) report[k] = v;
  PrintResult(TextStream(o.json_file), w, target.kind, m.result);
  if (database) {
    auto stored = database->CommitBatch({search::MakeTuningRecord(w, sch.trace(), target.info, m.result, &m.build)});
    if (!stored) throw UserError{fmt::format("cannot store the result in '{}': {}", o.db_file, stored.error().message)};
    fmt::print(stderr, "autotune: {} '{}' ({})\n", *stored ? "stored in" : "already in", o.db_file, target.info.Text());
  }
  if (!saved_output.empty()) WriteIoManifest(saved_output, w, o, target.kind, m.result, report);
  if (!o.json_file.empty()) WriteOutput(o.json_file, report.dump(2) + "\n", "the JSON report");
  return m.result.ok() ? 0 : 1;
}

}  // namespace

CommandRun AddMeasureCommand(CLI::App& app) {
  auto opts = std::make_shared<MeasureOptions>();
  auto* cmd = app.add_subcommand(
      "measure",
      "Build, run, check and time one schedule (exit status 0: correct and timed; 1: the candidate failed)");
  opts->wl.AddTo(*cmd);
  auto& c = opts->config;
  AddJsonOption(*cmd, opts->json_file, "the report");
  cmd->add_option("--db", opts->db_file, "store the result in this tuning database (created if missing)");
  cmd->add_option("--seed", c.seed, "seed of the random inputs")->check(NotNegative());
  cmd->add_option("--save-io", opts->save_io_dir,
                  "write the inputs and the checked run's output to this directory as .npy files, with io.json "
                  "naming them (for scripts/peer_bench.py --inputs)");
  AddMeasureOptions(*cmd, c);
  cmd->add_flag("--cuda-graph", c.cuda_graph,
                "cuda: replay each timed repeat's runs as a CUDA graph, without the gaps of back-to-back "
                "launches (as in a compiled model's graph; for kernels of a few microseconds)");
  cmd->footer(
      "Examples:\n"
      "  autotune measure --op gemm --shape M=512,N=512,K=512 --target cpu\n"
      "  autotune measure --op conv2d --shape N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1 --target cuda --json report.json\n"
      "  autotune measure --op gemm --shape M=1024,N=1024,K=1024 --target cuda --trace tune.json   # a tune report's best");
  return [opts]() { return RunMeasure(*opts); };
}

}  // namespace autotune::cli
