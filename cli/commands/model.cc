// autotune model: the learned cost model outside a tuning job. `train` learns from every valid record
// of a database (one target, optionally one operator) and writes the model to a file and/or stores it
// in the database; `eval` measures how well the model ranks records it did not learn from. Both
// replay and lower every record (the features come from the lowered program), spread over the cores.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <nlohmann/json.hpp>

#include "cli/cli_error.h"
#include "cli/command.h"
#include "cli/number_checks.h"
#include "cli/model_source.h"
#include "cli/open_database.h"
#include "cli/output.h"
#include "costmodel/cross_validation.h"
#include "costmodel/pretrained_models.h"
#include "costmodel/program_features.h"
#include "search/training_records.h"
#include "costmodel/xgboost_model.h"
#include "tir/ops/operator.h"
#include "support/parallel_for.h"
#include "support/stopwatch.h"

namespace autotune::cli {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;


// The options `train` and `eval` share: which records, and how the model learns.
struct DataOptions {
  std::string db;
  std::string op;
  std::string target;  // "": the one target kind of the database's valid records
  std::string objective = "weighted-regression";
  int rounds = costmodel::XGBoostConfig{}.rounds;
  uint64_t seed = 1;
  std::vector<std::string> leave_out;  // OP:SHAPE[:EPILOGUE] of workloads not to learn from
  bool balance_workloads = false;
};

void AddDataOptions(CLI::App& cmd, DataOptions& o) {
  cmd.add_option("--db", o.db, "tuning database to learn from")->required();
  cmd.add_option("--op", o.op, "only this operator's records (default: every operator)");
  cmd.add_option("--target", o.target,
                 "records of this target: cpu, cuda or kind:arch such as cuda:sm_90 (default: the kind of the "
                 "database's valid records, when they are of one kind)");
  cmd.add_option("--rounds", o.rounds, "boosting rounds")->check(CLI::Range(1, 10000));
  cmd.add_option("--seed", o.seed, "seed of the training (and of the split)")->check(NotNegative())->capture_default_str();
  cmd.add_option("--leave-out", o.leave_out,
                 "skip this workload's records, OP:SHAPE[:EPILOGUE] such as gemm:M=1024,N=1024,K=1024 (repeat for "
                 "several): a model for judging how tuning does on a shape the model has not seen");
  cmd.add_flag("--balance-workloads", o.balance_workloads,
               "weighted-regression: every workload weighs the same in all, however many records it has (how "
               "the built-in models are trained)");
}

// The workload key of a --leave-out value, OP:SHAPE[:EPILOGUE]; UserError when it is not a workload.
std::string LeftOutKey(const std::string& spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) {
    throw UserError{fmt::format("--leave-out '{}': expected OP:SHAPE, e.g. gemm:M=1024,N=1024,K=1024", spec)};
  }
  const std::string op = spec.substr(0, colon), rest = spec.substr(colon + 1);
  const size_t second = rest.find(':');
  const std::string shape = rest.substr(0, second);
  const std::string epilogue = second == std::string::npos ? "" : rest.substr(second + 1);
  auto w = tir::MakeWorkload(op, shape, epilogue);
  if (!w) throw UserError{fmt::format("--leave-out '{}': {}", spec, w.error().message)};
  return w->Key();
}

// --target, or the one kind of target the database has valid records of.
db::TargetQuery RecordsTarget(const std::string& target, db::TuningDatabase& database, const std::string& db) {
  if (!target.empty()) return Check(db::ParseTargetQuery(target));
  std::set<std::string> kinds;
  for (const auto& t : Check(database.Stats()).targets) {
    if (t.valid > 0) kinds.insert(t.target.kind);
  }
  if (kinds.empty()) throw UserError{fmt::format("'{}' has no valid records to learn from", db)};
  if (kinds.size() > 1) {
    throw UserError{fmt::format("'{}' has records of several targets ({}): choose one with --target", db,
                                fmt::join(kinds, ", "))};
  }
  return Check(db::ParseTargetQuery(*kinds.begin()));
}

costmodel::XGBoostConfig ModelConfig(const DataOptions& o, costmodel::Objective objective, const db::TargetQuery& q) {
  costmodel::XGBoostConfig c;
  c.objective = objective;
  c.rounds = o.rounds;
  c.seed = o.seed;
  c.target = q.Text();
  c.balance_workloads = o.balance_workloads;
  return c;
}

costmodel::Objective ParseObjectiveOption(const std::string& name) {
  auto o = costmodel::ParseObjective(name);
  if (!o) throw UserError{fmt::format("unknown objective '{}' (expected pairwise, regression or weighted-regression)", name)};
  return *o;
}

// Reads and featurizes the selected records, saying what it does (this takes seconds per thousand).
costmodel::TrainingSet ReadRecords(db::TuningDatabase& database, const DataOptions& o, const db::TargetQuery& q) {
  // The database's workloads, read once for what the options name: an --op or --leave-out the
  // database does not hold is a typo. (Leaving nothing out would pass a model that saw the shape for
  // one that did not; a default parameter spelled differently is another workload.)
  std::set<std::string> left_out;
  if (!o.op.empty() || !o.leave_out.empty()) {
    const auto workloads = Check(database.Workloads());
    if (!o.op.empty() && std::none_of(workloads.begin(), workloads.end(), [&](const auto& w) { return w.op == o.op; })) {
      throw UserError{fmt::format("'{}' has no records of operator '{}'", o.db, o.op)};
    }
    for (const std::string& spec : o.leave_out) {
      const std::string key = LeftOutKey(spec);
      if (std::none_of(workloads.begin(), workloads.end(), [&](const auto& w) { return w.key == key; })) {
        throw UserError{fmt::format("--leave-out '{}': '{}' has no records of that workload", spec, o.db)};
      }
      left_out.insert(key);
    }
  }
  const auto start = Clock::now();
  fmt::print(stderr, "autotune: reading and featurizing {} records of '{}' ({} threads)...\n", q.Text(), o.db, UsableCores());
  costmodel::TrainingSet set = Check(search::ReadTrainingSet(database, {q, o.op, left_out}, UsableCores()));
  fmt::print(stderr,
             "autotune: {} valid records of {} workload{} in {:.1f} s ({} failed or wrong: not learned from; {} no "
             "longer replay)\n",
             set.size(), set.NumGroups(), set.NumGroups() == 1 ? "" : "s", SecondsSince(start), set.invalid_records,
             set.stale_records);
  if (set.size() == 0) {
    throw UserError{fmt::format("'{}' has no valid {} records{} to learn from", o.db, q.Text(),
                                o.op.empty() ? "" : " of " + o.op)};
  }
  return set;
}

json MetricsJson(const costmodel::RankingMetrics& m) {
  return {{"pairwise_accuracy", m.pairwise_accuracy}, {"spearman", m.spearman}, {"top_k_recall", m.top_k_recall},
          {"k", m.k}, {"pairs", m.pairs}, {"records", m.records}, {"workloads", m.groups}};
}

// ---- train -----------------------------------------------------------------------------------------

CommandRun AddTrain(CLI::App& parent) {
  struct Options : DataOptions {
    std::string out, save_as;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "train", "Train the cost model on every valid record of a database, for `autotune tune --model`");
  AddDataOptions(*cmd, *o);
  cmd->add_option("--objective", o->objective, "pairwise, regression or weighted-regression")->capture_default_str();
  cmd->add_option("--out", o->out, "write the model to this file (XGBoost JSON)");
  cmd->add_option("--save-as", o->save_as, "store the model in the database under this name");
  cmd->footer(
      "Examples:\n"
      "  autotune model train --db autotune.db --out model.json        # then: autotune tune --model model.json\n"
      "  autotune model train --db autotune.db --target cuda:sm_90 --save-as h200 --rounds 400");
  return [o]() {
    if (o->out.empty() && o->save_as.empty()) throw UserError{"say where the model goes: --out FILE and/or --save-as NAME"};
    const auto objective = ParseObjectiveOption(o->objective);
    // Read-only until there is a model to store: a mistyped --db is an error, not a new empty file.
    auto database = OpenDatabase(o->db, db::OpenMode::kReadOnly);
    const db::TargetQuery q = RecordsTarget(o->target, *database, o->db);
    const costmodel::TrainingSet set = ReadRecords(*database, *o, q);
    const auto start = Clock::now();
    costmodel::XGBoostCostModel model(ModelConfig(*o, objective, q));
    Check(model.Train(set.rows, set.latencies_ms, set.groups));
    const std::string bytes = Check(model.Save());
    fmt::print(stderr, "autotune: trained a {} model on {} records in {:.1f} s (features {})\n", o->objective,
               set.size(), SecondsSince(start), costmodel::kFeatureVersion);
    if (!o->out.empty()) {
      WriteOutput(o->out, bytes, "the model");
      if (o->out != "-") fmt::print(stderr, "autotune: wrote '{}'\n", o->out);
    }
    if (!o->save_as.empty()) {
      db::StoredCostModel stored{o->save_as, costmodel::kFeatureVersion, q.kind,
                                 std::vector<uint8_t>(bytes.begin(), bytes.end()), static_cast<int64_t>(set.size()), ""};
      database.reset();
      Check(OpenDatabase(o->db, db::OpenMode::kReadWrite)->SaveCostModel(stored));
      fmt::print(stderr, "autotune: stored as '{}' in '{}' (use: autotune tune --db {} --model {} ...)\n", o->save_as,
                 o->db, o->db, o->save_as);
    }
    return 0;
  };
}

// ---- eval ------------------------------------------------------------------------------------------

struct EvalOptions : DataOptions {
  std::string model;
  std::string split = "workload";
  int folds = 5;
  int top_k = 10;
  std::string json_file;
};

// One row of the eval table: a model (or objective) and how well it ranked the records.
struct EvalRow {
  std::string model, split;
  int folds = 0;
  costmodel::RankingMetrics m;
};

std::vector<costmodel::Objective> EvalObjectives(const std::string& name) {
  if (name == "all") {
    return {costmodel::Objective::kPairwise, costmodel::Objective::kRegression,
            costmodel::Objective::kWeightedRegression};
  }
  return {ParseObjectiveOption(name)};
}

std::vector<EvalRow> CrossValidateEach(const EvalOptions& o, const std::vector<costmodel::Objective>& objectives,
                                       const costmodel::TrainingSet& set, const db::TargetQuery& q) {
  std::vector<EvalRow> rows;
  for (auto objective : objectives) {
    costmodel::CrossValidationConfig cv;
    cv.split = o.split == "workload" ? costmodel::Split::kWorkload : costmodel::Split::kRandom;
    cv.folds = o.folds;
    cv.seed = o.seed;
    cv.top_k = o.top_k;
    cv.model = ModelConfig(o, objective, q);
    const auto start = Clock::now();
    auto r = Check(costmodel::CrossValidate(set, cv));
    fmt::print(stderr, "autotune: {}: {} folds by {} in {:.1f} s\n", costmodel::ObjectiveName(objective), r.folds,
               o.split, SecondsSince(start));
    rows.push_back({costmodel::ObjectiveName(objective), o.split, r.folds, r.metrics});
  }
  return rows;
}

void WriteEvalJson(const EvalOptions& o, const std::vector<EvalRow>& rows, const costmodel::TrainingSet& set,
                   const db::TargetQuery& q) {
  json results = json::array();
  for (const auto& r : rows) {
    json j = MetricsJson(r.m);
    j["model"] = r.model;
    j["split"] = r.split;
    j["folds"] = r.folds;
    results.push_back(j);
  }
  const json report = {{"db", o.db}, {"target", q.Text()}, {"op", o.op}, {"feature_version", costmodel::kFeatureVersion},
                       {"records", set.size()}, {"workloads", set.NumGroups()}, {"results", results}};
  WriteOutput(o.json_file, report.dump(2) + "\n", "the JSON report");
}

void PrintEvalTable(const std::vector<EvalRow>& rows, int top_k) {
  size_t width = 5;
  for (const auto& r : rows) width = std::max(width, r.model.size());
  fmt::print("{:<{}} {:<8} {:>5} {:>8} {:>9} {:>9} {:>9} {:>9}\n", "model", width, "split", "folds", "records", "pairs",
             "pairwise", "spearman", fmt::format("top-{}", top_k));
  for (const auto& r : rows) {
    fmt::print("{:<{}} {:<8} {:>5} {:>8} {:>9} {:>9.3f} {:>9.3f} {:>9.3f}\n", r.model, width, r.split, r.folds,
               r.m.records, r.m.pairs, r.m.pairwise_accuracy, r.m.spearman, r.m.top_k_recall);
  }
}

int RunEval(const EvalOptions& o) {
  if (o.split != "workload" && o.split != "random") {
    throw UserError{fmt::format("unknown split '{}' (expected workload or random)", o.split)};
  }
  const std::vector<costmodel::Objective> objectives = EvalObjectives(o.objective);
  auto database = OpenDatabase(o.db, db::OpenMode::kReadOnly);
  const db::TargetQuery q = RecordsTarget(o.target, *database, o.db);
  // A bad --model should fail before the records are read.
  std::unique_ptr<costmodel::XGBoostCostModel> given;
  costmodel::ModelInfo given_info;
  if (!o.model.empty()) {
    given = std::make_unique<costmodel::XGBoostCostModel>(ModelConfig(o, objectives[0], q));
    given_info = LoadModel(o.model, *database, *given, q.kind);
  }
  const costmodel::TrainingSet set = ReadRecords(*database, o, q);
  std::vector<EvalRow> rows;
  if (given) {
    rows.push_back({fmt::format("{} ({})", o.model, given_info.objective), "none", 0,
                    costmodel::EvaluateRanking(given->PredictRows(set.rows), set.latencies_ms, set.groups, o.top_k)});
  } else {
    rows = CrossValidateEach(o, objectives, set, q);
  }
  if (!o.json_file.empty()) {
    WriteEvalJson(o, rows, set, q);
    if (o.json_file == "-") return 0;
  }
  PrintEvalTable(rows, o.top_k);
  return 0;
}

CommandRun AddEval(CLI::App& parent) {
  auto o = std::make_shared<EvalOptions>();
  auto* cmd = parent.add_subcommand(
      "eval",
      "How well the cost model ranks records it did not learn from: pairwise accuracy, Spearman correlation and "
      "top-k recall per workload");
  AddDataOptions(*cmd, *o);
  cmd->add_option("--objective", o->objective, "pairwise, regression, weighted-regression, or all (compare them)")
      ->capture_default_str();
  cmd->add_option("--model", o->model,
                  "score every record with this trained model (a file or a name stored in --db) instead of "
                  "cross-validating");
  cmd->add_option("--split", o->split,
                  "workload: each fold holds out whole workloads (the model never saw them); random: records at "
                  "random")
      ->capture_default_str();
  cmd->add_option("--folds", o->folds, "cross-validation folds")->check(CLI::Range(2, 100))->capture_default_str();
  cmd->add_option("--top-k", o->top_k, "k of the top-k recall")->check(CLI::Range(1, 100000))->capture_default_str();
  AddJsonOption(*cmd, o->json_file, "the figures");
  cmd->footer(
      "Examples:\n"
      "  autotune model eval --db autotune.db                     # cross-validated, held-out workloads\n"
      "  autotune model eval --db autotune.db --objective all     # compare the training objectives\n"
      "  autotune model eval --db other.db --model model.json     # a trained model on records it never saw");
  return [o]() { return RunEval(*o); };
}

}  // namespace

// ---- builtin ---------------------------------------------------------------------------------------

CommandRun AddBuiltin(CLI::App& parent) {
  struct Options {
    std::string target, out;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "builtin", "List the cost models built into autotune (tune starts from the one of its GPU), or write one out");
  cmd->add_option("--target", o->target, "the model of this target, e.g. cuda:sm_90 (with --out)");
  cmd->add_option("--out", o->out, "write that model to this file ('-' for stdout), e.g. for `model eval --model`");
  cmd->footer(
      "Examples:\n"
      "  autotune model builtin\n"
      "  autotune model builtin --target cuda:sm_90 --out sm90.json");
  return [o]() {
    if (o->out.empty() != o->target.empty()) throw UserError{"--out and --target go together"};
    if (!o->out.empty()) {
      auto m = costmodel::FindPretrainedModel(o->target);
      if (!m) throw UserError{fmt::format("no built-in cost model of '{}' (see `autotune model builtin`)", o->target)};
      WriteOutput(o->out, std::string(m->bytes), "the model");
      if (o->out != "-") fmt::print(stderr, "autotune: wrote '{}'\n", o->out);
      return 0;
    }
    fmt::print("{:<12} {:>8}  {:<14} {}\n", "target", "records", "features", "objective");
    for (const costmodel::PretrainedModel& m : costmodel::PretrainedModels()) {
      costmodel::XGBoostConfig config;
      config.threads = 1;
      costmodel::XGBoostCostModel model(config);
      auto info = model.Load(std::string(m.bytes));
      if (!info) {
        fmt::print("{:<12} does not load: {}\n", m.target, info.error().message);
        continue;
      }
      fmt::print("{:<12} {:>8}  {:<14} {}\n", m.target, info->records, info->feature_version, info->objective);
    }
    return 0;
  };
}

CommandRun AddModelCommand(CLI::App& app) {
  return AddCommandGroup(app, "model", "The learned cost model: train it on a database, evaluate how well it ranks",
                         "`autotune model COMMAND --help` shows a command's options and examples.\n"
                         "Examples:\n"
                         "  autotune model train --db autotune.db --out model.json\n"
                         "  autotune model eval --db autotune.db",
                         {AddTrain, AddEval, AddBuiltin});
}

}  // namespace autotune::cli
