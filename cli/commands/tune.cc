// autotune tune: searches schedules for one workload (--op/--shape), a list of them (--tasks FILE)
// or a network's layers (--network NAME --batch N), measures them, stores every result in the tuning
// database and reports the best per task. Re-running the same command resumes the job: traces
// measured before are never measured again. Ctrl-C finishes and stores the batch in flight, writes
// the report and exits with 130 (a second Ctrl-C exits at once).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_error.h"
#include "cli/workload_options.h"
#include "cli/command.h"
#include "cli/number_checks.h"
#include "cli/measure_options.h"
#include "cli/model_source.h"
#include "cli/open_database.h"
#include "cli/remote_options.h"
#include "cli/stop_signal.h"
#include "cli/target_option.h"
#include "cli/output.h"
#include "db/database.h"
#include "db/lookup/kernel_source.h"
#include "measure/c_builder.h"
#include "measure/cpu_runner.h"
#include "measure/cuda_runner.h"
#include "measure/nvrtc_builder.h"
#include "measure/nvrtc_compiler.h"
#include "costmodel/tuning_model.h"
#include "costmodel/xgboost_model.h"
#include "search/measure_record.h"
#include "search/networks.h"
#include "search/sketch.h"
#include "search/task_file.h"
#include "search/task_scheduler.h"
#include "search/tuner.h"
#include "tir/ops/operator.h"

namespace autotune::cli {

namespace {

using nlohmann::json;

struct TuneOptions {
  std::string op, shape, epilogue;
  std::string dtype;  // --dtype: empty when not given (float32)
  std::string precision;  // --precision: empty when not given (ieee)
  std::string tasks_file;
  std::string network;
  int batch = 0;  // of --network
  std::string target = "auto";
  int trials = 1000;      // the total, counting what the database holds of the job's workloads
  int more = 0;           // --more: this many beyond what the database holds, instead
  int64_t stored = 0;     // measurements the database held of the job's workloads on this device
  int to_measure = 0;     // what this run measures: --more, or --trials less `stored`
  int batch_size = 64;
  int population = search::EvolutionConfig{}.population;
  int min_per_sketch = search::EvolutionConfig{}.min_per_sketch;
  int transfer = search::TuneConfig{}.transfer;
  int remeasure_best = search::TuneConfig{}.remeasure_best;
  std::vector<std::string> sketches;  // --sketches (split at commas by CLI11); empty: the default set
  std::string db_file = "autotune.db";
  // The learned model by default: on the GPU suite, random ranking ended behind PyTorch far more often.
  std::string cost_model = "xgboost";
  std::string model;       // a trained model: file or name in the database; "none": no built-in model
  std::string model_used;  // what the job started from, for the report: `model`, "built-in:cuda:sm_90" or empty
  uint64_t seed = 1;
  bool serial_rounds = false;
  bool batch_runs = false;
  std::string json_file;
  std::string out_dir;
  measure::MeasureConfig config;
  RemoteOptions remote;
};

// ---- tasks -----------------------------------------------------------------------------------------

std::vector<search::TuneTaskSpec> Tasks(const TuneOptions& o) {
  const bool one = !o.op.empty() || !o.shape.empty();
  const bool file = !o.tasks_file.empty();
  const bool network = !o.network.empty();
  if (int(one) + int(file) + int(network) != 1) {
    throw UserError{one + file + network == 0
                        ? "nothing to tune: give --op and --shape, --tasks FILE or --network NAME --batch N"
                        : "give only one of --op/--shape, --tasks and --network"};
  }
  if (!o.epilogue.empty() && !one) throw UserError{"--epilogue goes with --op and --shape"};
  if ((!o.dtype.empty() || !o.precision.empty()) && file) {
    throw UserError{"--dtype and --precision go with --op or --network (a task file gives each task's \"dtype\")"};
  }
  const std::string dtype = NumberTypeName(o.dtype.empty() ? "float32" : o.dtype, o.precision.empty() ? "ieee" : o.precision);
  if (o.batch != 0 && !network) throw UserError{"--batch goes with --network (the measurements per round are --batch-size)"};
  if (one) {
    if (o.op.empty()) throw UserError{"--shape needs --op"};
    if (o.shape.empty()) throw UserError{"--op needs --shape"};
    search::TuneTaskSpec spec;
    spec.op = o.op;
    spec.shape = o.shape;
    spec.epilogue = o.epilogue == "none" ? "" : o.epilogue;
    spec.dtype = dtype;
    if (auto w = search::WorkloadOf(spec); !w) throw UserError{w.error().message};
    return {spec};
  }
  if (file) {
    auto tasks = search::LoadTaskFile(o.tasks_file);
    if (!tasks) throw UserError{tasks.error().message};
    if (tasks->empty()) throw UserError{fmt::format("task file '{}' lists no tasks", o.tasks_file)};
    return std::move(tasks).value();
  }
  auto tasks = search::NetworkTasks(o.network, o.batch == 0 ? 1 : o.batch);
  if (!tasks) throw UserError{tasks.error().message};
  // A precision applies to the layers whose products take one (gemm, batch_matmul, convolutions); the
  // rest stay float32.
  const bool precision = !o.precision.empty() && o.precision != "ieee";
  for (auto& t : *tasks) {
    const tir::OperatorDef* def = tir::BuiltinOperators().Find(t.op);
    t.dtype = precision && def && !def->TakesPrecision() ? "float32" : dtype;
  }
  return std::move(tasks).value();
}

// ---- progress --------------------------------------------------------------------------------------

std::string Duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long v = std::lround(s);
  if (v >= 3600) return fmt::format("{}h{:02}m", v / 3600, v / 60 % 60);
  if (v >= 60) return fmt::format("{}m{:02}s", v / 60, v % 60);
  return fmt::format("{}s", v);
}

std::string Gflops(double v) { return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

std::string BestText(const search::TaskReport& r) {
  if (r.best_latency_ms <= 0) return "best -";
  return fmt::format("best {:.4g} ms ({} GFLOP/s)", r.best_latency_ms, Gflops(r.best_gflops));
}

class Progress {
 public:
  explicit Progress(size_t tasks) : tty_(isatty(STDERR_FILENO) == 1), tasks_(tasks) {}

  void Update(const search::TuneProgress& p) {
    const auto& r = (*p.reports)[p.task];
    const double rate = p.elapsed_s > 0 ? p.trials_done / p.elapsed_s : 0;
    const double left = rate > 0 ? (p.trials_total - p.trials_done) / rate : NAN;
    const std::string task = tasks_ > 1 ? fmt::format("task {}/{} {}", p.task + 1, tasks_, r.workload) : r.workload;
    if (tty_) {
      fmt::print(stderr, "\r[{}/{}] {}  {}  {:.2f} cand/s  ETA {}\x1b[K", p.trials_done, p.trials_total, task,
                 BestText(r), rate, Duration(left));
      open_line_ = true;
    } else {
      fmt::print(stderr, "autotune: [{}/{}] {}: {}; {:.2f} candidates/s, about {} left (search {:.0f} s, model {:.0f} s, build {:.0f} s, run {:.0f} s; waited {:.0f} s)\n",
                 p.trials_done, p.trials_total, task, BestText(r), rate, Duration(left), r.search_seconds,
                 r.model_seconds, r.build_seconds, r.run_seconds, r.wait_seconds);
    }
    std::fflush(stderr);
  }
  // Ends the rewritten line before anything else is printed.
  void Done() {
    if (open_line_) fmt::print(stderr, "\n");
    open_line_ = false;
  }

 private:
  bool tty_;
  size_t tasks_;
  bool open_line_ = false;
};

// ---- reports ---------------------------------------------------------------------------------------

json NullIfZero(double v) { return v > 0 && std::isfinite(v) ? json(v) : json(nullptr); }

// Weighted total latency; 0 when some task has no valid schedule.
double WeightedLatency(const std::vector<search::TaskReport>& reports) {
  double total = 0;
  for (const auto& r : reports) {
    if (r.best_latency_ms <= 0) return 0;
    total += r.spec.weight * r.best_latency_ms;
  }
  return total;
}

json RemeasuredJson(const std::vector<search::Remeasurement>& remeasured) {
  json out = json::array();
  for (const auto& m : remeasured) {
    out.push_back({{"trace_hash", m.trace_hash}, {"first_ms", m.first_ms}, {"again_ms", NullIfZero(m.again_ms)},
                   {"spread", m.spread}});
  }
  return out;
}

// "re-measured: 1.3400 -> 2.2100 ms (spread 3%), ..." for the tasks whose best few were measured again.
void PrintRemeasured(std::FILE* to, const std::vector<search::TaskReport>& reports) {
  for (const auto& r : reports) {
    if (r.remeasured.empty()) continue;
    std::vector<std::string> parts;
    for (const auto& m : r.remeasured) {
      parts.push_back(m.again_ms > 0 ? fmt::format("{:.4f} -> {:.4f} ms ({:.0f}%)", m.first_ms, m.again_ms, 100 * m.spread)
                                     : fmt::format("{:.4f} -> failed", m.first_ms));
    }
    fmt::print(to, "re-measured {} (median before -> again, spread): {}\n", r.workload, fmt::join(parts, ", "));
  }
}

void PrintTable(std::FILE* to, const std::vector<search::TaskReport>& reports) {
  size_t width = 4;
  for (const auto& r : reports) width = std::max(width, r.workload.size());
  fmt::print(to, "{:<{}}  {:>10}  {:>9}  {:>6}  {:>6}\n", "task", width, "best ms", "GFLOP/s", "trials", "weight");
  int trials = 0, failed = 0;
  for (const auto& r : reports) {
    const std::string ms = r.best_latency_ms > 0 ? fmt::format("{:.4f}", r.best_latency_ms) : "-";
    const std::string gf = r.best_latency_ms > 0 ? fmt::format("{:.2f}", r.best_gflops) : "-";
    fmt::print(to, "{:<{}}  {:>10}  {:>9}  {:>6}  {:>6}\n", r.workload, width, ms, gf, r.trials, fmt::format("{:g}", r.spec.weight));
    trials += r.trials;
    failed += r.failed;
  }
  const double total = WeightedLatency(reports);
  fmt::print(to, "{:<{}}  {:>10}  {:>9}  {:>6}\n", "weighted total", width, total > 0 ? fmt::format("{:.4f}", total) : "-",
             "", trials);
  if (failed > 0) fmt::print(to, "({} of {} candidates failed: build errors, crashes, timeouts or wrong answers)\n", failed, trials);
  int transferred = 0, tasks_transferred = 0;
  for (const auto& r : reports) {
    transferred += r.transferred;
    tasks_transferred += r.transferred > 0;
  }
  if (transferred > 0) {
    fmt::print(to, "({} of the trials of {} task{} were the best schedules of nearby shapes in the database, adapted: "
               "--transfer)\n", transferred, tasks_transferred, tasks_transferred == 1 ? "" : "s");
  }
  PrintRemeasured(to, reports);
}

// DIR/<op>_<first 12 hex digits of the key>.cu|.c for every task with a valid schedule; returns the
// file per task ("" when none).
std::vector<std::string> WriteKernels(const std::string& dir, const std::vector<search::TaskReport>& reports,
                                      tir::TargetKind target) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UserError{fmt::format("cannot create the directory '{}': {}", dir, ec.message())};
  std::vector<std::string> files(reports.size());
  for (size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    if (r.best_trace_json.empty()) continue;
    auto w = search::WorkloadOf(r.spec);
    auto trace = w ? tir::Trace::FromJsonText(r.best_trace_json) : Result<tir::Trace>(w.error());
    auto sch = trace ? tir::Schedule::Replay(*w, target, *trace) : Result<tir::Schedule>(trace.error());
    auto src = sch ? db::GenerateKernelSource(*sch) : Result<db::KernelSource>(sch.error());
    if (!src) {
      fmt::print(stderr, "autotune: no kernel source for {}: {}\n", r.workload, src.error().message);
      continue;
    }
    const std::string path = (std::filesystem::path(dir) / fmt::format("{}_{}.{}", r.spec.op, w->Key().substr(0, 12),
                                                                         src->language == "cuda" ? "cu" : "c"))
                                 .string();
    WriteOutput(path, src->code, "the kernel source");
    files[i] = path;
  }
  return files;
}

json Report(const TuneOptions& o, const MeasureTarget& target, const std::vector<search::TaskReport>& reports,
            const std::vector<std::string>& kernel_files, double seconds, bool interrupted) {
  json tasks = json::array();
  int trials = 0, failed = 0;
  for (size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    json curve = json::array();
    for (double v : r.curve) curve.push_back(NullIfZero(v));
    json t = {{"op", r.spec.op},
              {"shape", r.spec.shape},
              {"epilogue", r.spec.epilogue},
              {"dtype", r.spec.dtype},
              {"weight", r.spec.weight},
              {"workload", r.workload},
              {"best_latency_ms", NullIfZero(r.best_latency_ms)},
              {"best_gflops", NullIfZero(r.best_gflops)},
              {"trials", r.trials},
              {"failed", r.failed},
              {"seconds", r.seconds},
              {"search_seconds", r.search_seconds},
              {"build_seconds", r.build_seconds},
              {"run_seconds", r.run_seconds},
              {"model_seconds", r.model_seconds},
              {"wait_seconds", r.wait_seconds},
              {"build_cpu_seconds", r.build_cpu_seconds},
              {"timed_seconds", r.timed_seconds},
              {"cached_builds", r.cached_builds},
              {"transferred", r.transferred},
              {"transferred_from", r.transferred_from},
              {"best_trace", r.best_trace_json.empty() ? json(nullptr) : json::parse(r.best_trace_json)},
              {"curve", curve},
              {"remeasured", RemeasuredJson(r.remeasured)}};
    if (!r.spec.name.empty()) t["name"] = r.spec.name;
    if (i < kernel_files.size() && !kernel_files[i].empty()) t["kernel_file"] = kernel_files[i];
    tasks.push_back(std::move(t));
    trials += r.trials;
    failed += r.failed;
  }
  return {{"target", tir::TargetKindName(target.kind)},
          {"target_info", target.info.Text()},
          {"db", o.db_file},
          {"seed", o.seed},
          {"cost_model", o.cost_model},
          {"model", o.model_used.empty() ? json(nullptr) : json(o.model_used)},
          {"trials_budget", o.more > 0 ? json(nullptr) : json(o.trials)},
          {"more", o.more > 0 ? json(o.more) : json(nullptr)},
          {"trials_stored_before", o.stored},
          {"batch_size", o.batch_size},
          {"min_per_sketch", o.min_per_sketch},
          {"transfer", o.transfer},
          {"remeasure_best", o.remeasure_best},
          {"sketches", o.sketches.empty() ? json(nullptr) : json(fmt::format("{}", fmt::join(o.sketches, ",")))},
          {"screen_ratio", o.config.screen_ratio},
          {"interrupted", interrupted},
          {"tasks", tasks},
          {"total",
           {{"trials", trials},
            {"failed", failed},
            {"seconds", seconds},
            {"weighted_latency_ms", NullIfZero(WeightedLatency(reports))}}}};
}

// --sketches: each name a built-in sketch, of the target when it is given.
void CheckSketchNames(const std::vector<std::string>& names, const std::string& target) {
  for (const std::string& name : names) {
    const search::SketchSpec* s = search::FindSketch(name);
    if (!s) {
      throw UserError{fmt::format("unknown sketch '{}' in --sketches (known: {})", name, search::BuiltinSketchNames())};
    }
    if (target != "auto" && tir::TargetKindName(s->target) != target) {
      throw UserError{fmt::format("sketch '{}' is for the {} target, not {}", name, tir::TargetKindName(s->target), target)};
    }
  }
}

// Every task must be measurable on the job's target and offered one of the named sketches there, or
// it could not be tuned.
void CheckTasksFitTarget(const std::vector<std::string>& sketches, const std::vector<search::TuneTaskSpec>& tasks,
                         tir::TargetKind target) {
  for (const auto& t : tasks) {
    auto w = search::WorkloadOf(t);
    if (!w) throw UserError{w.error().message};
    if (!sketches.empty() && search::ApplicableSketches(tir::Schedule(*w, target), sketches).empty()) {
      throw UserError{fmt::format("none of the sketches in --sketches applies to {} {} on the {} target", t.op, t.shape,
                                  tir::TargetKindName(target))};
    }
  }
}

// The options of `tune`, into `o`.
void AddTuneOptions(CLI::App& cmd, TuneOptions& o) {
  cmd.add_option("--op", o.op, "operator (see `autotune ops`)");
  cmd.add_option("--shape", o.shape, "shape parameters, e.g. M=1024,N=1024,K=1024");
  cmd.add_option("--epilogue", o.epilogue, kEpilogueHelp);
  cmd.add_option("--dtype", o.dtype,
                 "element type of --op's or --network's tensors: float32 (default), float16 or bfloat16 (16-bit "
                 "types accumulate in float32 and round once into the output)");
  cmd.add_option("--precision", o.precision,
                 std::string(kPrecisionHelp) + "; with --network, for its gemm, batch_matmul and convolution layers");
  cmd.add_option("--tasks", o.tasks_file,
                 "JSON task list: [{\"op\", \"shape\", \"epilogue\", \"dtype\", \"weight\", \"name\"}, ...]");
  cmd.add_option("--network", o.network, "tune a network's layers: resnet18, resnet50, mobilenet_v2, bert_base or dcgan");
  cmd.add_option("--batch", o.batch, "batch size of --network (default 1)")->check(CLI::Range(1, 4096));
  cmd.add_option("--target", o.target, TargetOptionHelp(true))
      ->capture_default_str();
  auto* trials = cmd.add_option("--trials", o.trials,
                                 "measurements of the job's workloads on this device in all, counting those the "
                                 "database already holds (running a job again measures only what is missing)")
                      ->check(CLI::Range(1, 100000000))
                      ->capture_default_str();
  cmd.add_option("--more", o.more, "measure this many more, whatever the database holds")
      ->check(CLI::Range(1, 100000000))
      ->excludes(trials);
  cmd.add_option("--batch-size", o.batch_size, "measurements per round")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd.add_option("--population", o.population, "candidates per generation of the evolutionary search")
      ->check(CLI::Range(1, 1000000));
  cmd.add_option("--min-per-sketch", o.min_per_sketch,
                 "each round measures at least this many of the model's best candidates of every sketch (e.g. "
                 "split-K and not), so that a start model that favours one sketch does not hide the others "
                 "(0: off)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd.add_option("--transfer", o.transfer,
                 "a task with no record of its own on this target (of the searched sketches) starts with up to this "
                 "many of the best schedules of the nearest other shapes of its operator in --db, adapted to its "
                 "shape (0: none)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd.add_option("--remeasure-best", o.remeasure_best,
                 "at the end of a job not stopped, each task's fastest this many records measured again, back to "
                 "back, until the fastest this many are all re-measured (at most three passes): a first figure that "
                 "was a lucky outlier does not stay the best; the first figure stays in the record's info (0: off)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  std::string sketch_names;
  for (const auto& s : search::BuiltinSketches()) {
    const char* note = !s.by_default ? " (only when named)" : s.searched_alone ? " (alone where it fits whole tiles)" : "";
    sketch_names += fmt::format("{}{}{}", sketch_names.empty() ? "" : ", ", s.name, note);
  }
  cmd.add_option("--sketches", o.sketches,
                 "comma-separated schedule structures to search instead of the default ones (only their schedules "
                 "seed the search; the first round still measures the default schedule): " + sketch_names)
      ->delimiter(',');
  cmd.add_option("--cost-model", o.cost_model,
                 "xgboost: learned from this job's measurements, on top of --model's (without one, random until 32 "
                 "are valid); or random (no model: for comparisons)")
      ->capture_default_str();
  cmd.add_option("--model", o.model,
                 "start from a trained cost model: a file or a name stored in --db (see `autotune model train`), or "
                 "none; by default the model built into autotune for the GPU, when it has one (cuda:sm_90)");
  cmd.add_option("--db", o.db_file, "tuning database (created if missing)")->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed of the search")->check(NotNegative())->capture_default_str();
  cmd.add_option("--screen-ratio", o.config.screen_ratio,
                 "a candidate whose first timed repeat is slower than this many times the best so far gets no "
                 "further repeats (0: every candidate gets all --repeats)")
      ->check(FiniteRange(0.0, 1000.0))
      ->capture_default_str();
  cmd.add_flag("--serial-rounds", o.serial_rounds,
               "build the next round only after this one is measured (by default, on a GPU or workers, the next "
               "round is proposed and built while this one runs)");
  cmd.add_flag("--batch-runs", o.batch_runs,
               "on a local GPU, measure a round only once all its candidates are built (by default each candidate "
               "runs as soon as it is built, while the round's slowest still compile)");
  AddJsonOption(cmd, o.json_file, "the report");
  cmd.add_option("--out", o.out_dir, "write the best kernel of every task to this directory");
  AddMeasureOptions(cmd, o.config);
  AddRemoteOptions(cmd, o.remote);
}

// Checks the options and splits --target into its kind and the config's instruction set.
void CheckTuneOptions(TuneOptions& o) {
  if (o.cost_model != "xgboost" && o.cost_model != "random") {
    throw UserError{fmt::format("unknown cost model '{}' (expected xgboost or random)", o.cost_model)};
  }
  if (!o.model.empty() && o.model != "none" && o.cost_model != "xgboost") {
    throw UserError{"--model needs --cost-model xgboost"};
  }
  o.target = TakeTargetOption(o.target, o.config, /*allow_auto=*/true);
  CheckSketchNames(o.sketches, o.target);
  // A model named in a database that does not exist yet cannot be there: say so before creating it.
  std::error_code ec;
  if (!o.model.empty() && o.model != "none" && !std::filesystem::is_regular_file(o.model, ec) &&
      !std::filesystem::exists(o.db_file, ec)) {
    throw UserError{fmt::format("no model file '{}', and no database '{}' that could hold a model of that name",
                                o.model, o.db_file)};
  }
}

// Where candidates are built and measured: the workers of --workers, else this machine.
struct Measurement {
  MeasureTarget target;
  std::unique_ptr<measure::Builder> builder;
  std::unique_ptr<measure::Runner> runner;
};

Measurement SetUpMeasurement(TuneOptions& o, bool build_timeout_given) {
  if (!o.remote.workers.empty()) {
    if (o.target != "cpu" && !build_timeout_given) o.config.build_timeout_s = kCudaTuneBuildTimeoutS;
    RemoteMeasurement remote = ConnectWorkers(o.remote, o.target, o.config);
    return {remote.target, std::move(remote.builder), std::move(remote.runner)};
  }
  const RemoteOptions& r = o.remote;
  if (!r.token_file.empty() || !r.tls_cert.empty() || !r.tls_key.empty() || !r.tls_ca.empty()) {
    throw UserError{"--token-file and the --tls-* options go with --workers"};
  }
  Measurement m;
  m.target = ResolveMeasureTarget(o.target, o.config);
  if (m.target.kind == tir::TargetKind::kCuda && !build_timeout_given) o.config.build_timeout_s = kCudaTuneBuildTimeoutS;
  m.builder = MakeBuilder(m.target.kind, o.config);
  m.runner = MakeRunner(m.target.kind, o.config);
  return m;
}

// The job's cost model; sets o.model_used to what it started from.
std::unique_ptr<costmodel::CostModel> MakeCostModel(TuneOptions& o, db::TuningDatabase& database,
                                                    const MeasureTarget& target) {
  if (o.cost_model == "random") return costmodel::MakeRandomCostModel(o.seed);
  auto xgb = costmodel::MakeTuningXGBoost(target.info.ShortText(), o.seed);
  if (o.model == "none") return xgb;  // a cold start: the job's own measurements only
  if (!o.model.empty()) {
    const costmodel::ModelInfo info = LoadModel(o.model, database, *xgb, tir::TargetKindName(target.kind));
    fmt::print(stderr, "autotune: starting from the {} cost model '{}' ({} records of {})\n", info.objective, o.model,
               info.records, info.target);
    o.model_used = o.model;
    return xgb;
  }
  const std::string builtin = target.info.ShortText();
  auto started = costmodel::StartFromBuiltinModel(*xgb, builtin);
  if (!started) {
    fmt::print(stderr, "autotune: warning: the built-in cost model of {} does not load ({}); starting cold\n", builtin,
               started.error().message);
  } else if (*started) {
    fmt::print(stderr, "autotune: starting from the built-in cost model of {} ({} records; --model none starts cold)\n",
               builtin, (*started)->records);
    o.model_used = "built-in:" + builtin;
  }
  return xgb;
}

search::TuneConfig MakeTuneConfig(const TuneOptions& o, const MeasureTarget& target) {
  search::TuneConfig tc;
  tc.target = SearchTarget(target.info);
  tc.target_info = target.info;
  tc.trials = o.to_measure;
  tc.batch_size = o.batch_size;
  tc.seed = o.seed;
  // The cpu target times kernels on the cores the builds would use: one round at a time there.
  tc.overlap_rounds = !o.serial_rounds && (target.kind == tir::TargetKind::kCuda || !o.remote.workers.empty());
  tc.stream_runs = !o.batch_runs;
  tc.evolution.sketches = o.sketches;
  tc.evolution.population = o.population;
  tc.evolution.min_per_sketch = o.min_per_sketch;
  tc.transfer = o.transfer;
  tc.remeasure_best = o.remeasure_best;
  return tc;
}

// What this run measures: --more, or what --trials leaves after the database's measurements.
void PlanTrials(TuneOptions& o, db::TuningDatabase& database, const std::vector<search::TuneTaskSpec>& tasks,
                const MeasureTarget& target) {
  auto stored = search::StoredTrials(database, tasks, target.info);
  if (!stored) throw UserError{stored.error().message};
  o.stored = *stored;
  o.to_measure = o.more > 0 ? o.more : static_cast<int>(std::max<int64_t>(0, o.trials - o.stored));
  if (o.stored == 0 || o.more > 0) return;
  if (o.to_measure == 0) {
    fmt::print(stderr, "autotune: the database holds {} measurements of this job's workloads on {}, --trials {} "
                       "are done (raise --trials, or --more N measures N more)\n",
               o.stored, target.info.Text(), o.trials);
  } else {
    fmt::print(stderr, "autotune: the database holds {} measurements of this job's workloads on {}: {} more make "
                       "--trials {}\n",
               o.stored, target.info.Text(), o.to_measure, o.trials);
  }
}

void PrintJobPlan(const TuneOptions& o, size_t tasks, const MeasureTarget& target) {
  if (o.to_measure == 0) return;
  fmt::print(stderr, "autotune: tuning {} task{} on {}: {} trials in rounds of {}, database '{}'\n", tasks,
             tasks == 1 ? "" : "s", target.info.Text(), o.to_measure, o.batch_size, o.db_file);
  if (o.remote.workers.empty()) WarnIfHostBusy(target, o.config);
  const size_t trials = static_cast<size_t>(o.to_measure);
  if (trials < tasks) {
    fmt::print(stderr, "autotune: warning: {} trials for {} tasks: the last {} get no trial (each task needs one at least)\n",
               o.to_measure, tasks, tasks - trials);
  } else if (trials < tasks * static_cast<size_t>(o.batch_size)) {
    fmt::print(stderr, "autotune: {} trials for {} tasks: first rounds of about {} instead of {}, so that every task gets one\n",
               o.to_measure, tasks, search::FirstRoundSize(o.to_measure, static_cast<int>(tasks), o.batch_size),
               o.batch_size);
  }
}

// Prints the table, writes the kernels and the report; 130 when the job was interrupted.
int FinishJob(const TuneOptions& o, const MeasureTarget& target, const std::vector<search::TaskReport>& reports,
              double seconds) {
  const bool interrupted = StopRequested().load();
  PrintTable(TextStream(o.json_file), reports);
  std::vector<std::string> kernel_files;
  if (!o.out_dir.empty()) kernel_files = WriteKernels(o.out_dir, reports, target.kind);
  if (!o.json_file.empty()) {
    const json report = Report(o, target, reports, kernel_files, seconds, interrupted);
    WriteOutput(o.json_file, report.dump(2) + "\n", "the JSON report");
  }
  if (!interrupted) return 0;
  fmt::print(stderr, "autotune: interrupted; every measured batch is in '{}': run the same command to resume\n",
             o.db_file);
  return kExitInterrupted;
}

int RunTune(TuneOptions& o, bool build_timeout_given) {
  CheckTuneOptions(o);
  const std::vector<search::TuneTaskSpec> tasks = Tasks(o);
  // Before the database is opened where the target is given; once it is resolved otherwise.
  if (o.target != "auto") CheckTasksFitTarget(o.sketches, tasks, *tir::ParseTargetKind(o.target));
  // Open the database first: a bad path or a corrupt file should not cost a measurement.
  std::unique_ptr<db::TuningDatabase> database = OpenDatabase(o.db_file, db::OpenMode::kReadWrite);
  Measurement m = SetUpMeasurement(o, build_timeout_given);
  if (o.target == "auto") CheckTasksFitTarget(o.sketches, tasks, m.target.kind);
  std::unique_ptr<costmodel::CostModel> model = MakeCostModel(o, *database, m.target);
  PlanTrials(o, *database, tasks, m.target);
  PrintJobPlan(o, tasks.size(), m.target);
  InstallStopSignals(
      "\nautotune: interrupted: storing the batch in flight, then writing the report (Ctrl-C again to quit now)\n");
  Progress progress(tasks.size());
  search::Tuner tuner(MakeTuneConfig(o, m.target), *m.builder, *m.runner, *database, *model);
  const auto start = std::chrono::steady_clock::now();
  auto reports = tuner.Run(tasks, StopRequested(), [&](const search::TuneProgress& p) { progress.Update(p); });
  progress.Done();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!reports) throw UserError{reports.error().message};
  return FinishJob(o, m.target, *reports, seconds);
}

}  // namespace

CommandRun AddTuneCommand(CLI::App& app) {
  auto o = std::make_shared<TuneOptions>();
  o->config.screen_ratio = kTuneScreenRatio;
  auto* cmd = app.add_subcommand(
      "tune",
      "Search schedules for an operator, a task list or a network, measure them and keep the fastest in the "
      "tuning database (re-running resumes; Ctrl-C stores the batch in flight and exits with 130)");
  AddTuneOptions(*cmd, *o);
  cmd->footer(
      "Examples:\n"
      "  autotune tune --op gemm --shape M=512,N=512,K=512 --target cpu --trials 64\n"
      "  autotune tune --op conv2d --shape N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1 --epilogue bias,relu --json r.json\n"
      "  autotune tune --network resnet50 --batch 1 --db resnet50.db --out kernels/\n"
      "  autotune tune --tasks tasks.json --trials 2000 --workers gpu1:50051,gpu2:50051 --token-file token");
  const CLI::Option* build_timeout = cmd->get_option("--build-timeout");
  return [o, build_timeout]() { return RunTune(*o, build_timeout->count() > 0); };
}

}  // namespace autotune::cli
