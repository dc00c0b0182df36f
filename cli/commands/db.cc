// autotune db: look into tuning databases and move records between them (stats, top, export,
// import, merge). Databases that are only read are opened read-only: a missing path is an error,
// never a new empty file, and an older schema is read without upgrading the file.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/cli_error.h"
#include "cli/workload_options.h"
#include "cli/command.h"
#include "cli/open_database.h"
#include "cli/output.h"
#include "db/database.h"
#include "db/jsonl.h"
#include "db/merge.h"
#include "search/sketch.h"
#include "support/input_file.h"
#include "tir/ops/operator.h"
#include "tir/schedule/trace.h"

namespace autotune::cli {

namespace {

using nlohmann::json;

json TargetJson(const db::TargetInfo& t) {
  return {{"kind", t.kind}, {"arch", t.arch}, {"device", t.device}, {"driver", t.driver}, {"toolkit", t.toolkit}};
}

// ---- stats ----------------------------------------------------------------------------------------

CommandRun AddStats(CLI::App& parent) {
  struct Options {
    std::string db;
    std::string json;  // --json: "-" for stdout, or a file
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "stats", "Counts: workloads, records and cost models; per target, valid and invalid records");
  cmd->add_option("--db", o->db, "tuning database")->required();
  AddJsonOption(*cmd, o->json, "the counts");
  cmd->footer(
      "Examples:\n"
      "  autotune db stats --db autotune.db\n"
      "  autotune db stats --db autotune.db --json | jq '.targets[] | select(.invalid > 0)'");
  return [o]() {
    auto database = OpenDatabase(o->db, db::OpenMode::kReadOnly);
    const db::DatabaseStats st = Check(database->Stats());
    const int file_version = database->file_schema_version();
    if (!o->json.empty()) {
      json targets = json::array();
      for (const auto& t : st.targets) {
        targets.push_back({{"target", TargetJson(t.target)},
                           {"workloads", t.workloads},
                           {"records", t.records},
                           {"valid", t.valid},
                           {"invalid", t.invalid}});
      }
      WriteOutput(o->json, json{{"path", o->db},
                              {"schema_version", file_version},
                              {"workloads", st.workloads},
                              {"records", st.records},
                              {"cost_models", st.cost_models},
                              {"targets", targets}}
                             .dump(2) + "\n",
                  "the JSON");
      return 0;
    }
    fmt::print("{}: schema {}{}; {} workloads, {} records, {} cost models\n", o->db, file_version,
               file_version < st.schema_version
                   ? fmt::format(" (older: read as schema {}; opening it read-write upgrades it)", st.schema_version)
                   : "",
               st.workloads, st.records, st.cost_models);
    if (st.targets.empty()) return 0;
    std::vector<std::string> names;
    size_t width = 6;
    for (const auto& t : st.targets) {
      names.push_back(t.target.Text());
      width = std::max(width, names.back().size());
    }
    fmt::print("\n{:<{}}  {:>9}  {:>9}  {:>9}  {:>9}\n", "target", width, "workloads", "records", "valid", "invalid");
    for (size_t i = 0; i < st.targets.size(); ++i) {
      const auto& t = st.targets[i];
      fmt::print("{:<{}}  {:>9}  {:>9}  {:>9}  {:>9}\n", names[i], width, t.workloads, t.records, t.valid, t.invalid);
    }
    return 0;
  };
}

// ---- top ------------------------------------------------------------------------------------------

// The sketch that made a record's schedule (search::SketchOfTrace), or "-" for a trace that no longer
// parses or that no built-in sketch of its target makes.
std::string SketchNameOf(const db::TuningRecord& r) {
  auto trace = tir::Trace::FromJsonText(r.trace_json);
  auto kind = tir::ParseTargetKind(r.target.kind);
  const search::SketchSpec* s = trace && kind ? search::SketchOfTrace(*trace, *kind) : nullptr;
  return s ? s->name : "-";
}

struct TopOptions {
  std::string db, op, shape, epilogue, target, sketch;
  std::string dtype = "float32";
  std::string precision = "ieee";
  int n = 10;
  std::string json;  // --json: "-" for stdout, or a file
};

// A record with the name of the sketch that made its schedule.
struct Ranked {
  db::TuningRecord record;
  std::string sketch;
};

// What `db top` found: the best records, fastest first, and the counts that frame them.
struct TopResult {
  std::string workload, key, where;
  std::vector<Ranked> best;
  size_t matching = 0;  // valid records of --sketch (of every sketch without it)
  db::TuningDatabase::RecordCounts counts;
};

TopResult FindTop(const TopOptions& o) {
  if (!o.sketch.empty() && !search::FindSketch(o.sketch)) {
    throw UserError{fmt::format("unknown sketch '{}' in --sketch (known: {})", o.sketch, search::BuiltinSketchNames())};
  }
  // The workload is rebuilt as the tuner made it, so the key is the one its records are stored under.
  auto w = tir::MakeWorkload(o.op, o.shape, o.epilogue, NumberTypeName(o.dtype, o.precision));
  if (!w) throw UserError{w.error().message};
  std::vector<db::TargetQuery> queries = {db::TargetQuery{"cpu", ""}, db::TargetQuery{"cuda", ""}};
  if (!o.target.empty()) queries = {Check(db::ParseTargetQuery(o.target))};
  auto database = OpenDatabase(o.db, db::OpenMode::kReadOnly);
  TopResult top{w->CanonicalText(), w->Key(), o.target.empty() ? "any target" : o.target, {}, 0, {}};
  for (const auto& q : queries) {
    // With --sketch every valid record is read, so the filter does not stop at the first n.
    for (auto& r : Check(database->Best(top.key, q, o.sketch.empty() ? o.n : 0))) {
      std::string sketch = SketchNameOf(r);
      if (o.sketch.empty() || sketch == o.sketch) top.best.push_back({std::move(r), std::move(sketch)});
    }
  }
  top.matching = top.best.size();
  // Every target's best, fastest first (stable: each query's order is kept for equal medians).
  std::stable_sort(top.best.begin(), top.best.end(),
                   [](const Ranked& a, const Ranked& b) { return a.record.median_ms < b.record.median_ms; });
  if (static_cast<int>(top.best.size()) > o.n) top.best.resize(o.n);
  std::optional<db::TargetQuery> filter;
  if (!o.target.empty()) filter = queries[0];
  top.counts = Check(database->CountRecords(top.key, filter));
  return top;
}

json TopJson(const TopOptions& o, const TopResult& top) {
  json records = json::array();
  int rank = 0;
  for (const auto& [r, sketch] : top.best) {
    records.push_back({{"rank", ++rank}, {"median_ms", r.median_ms}, {"gflops", r.gflops},
                       {"target", TargetJson(r.target)}, {"measured_at", r.measured_at}, {"sketch", sketch},
                       {"trace_hash", r.trace_hash}, {"trace", json::parse(r.trace_json, nullptr, false)}});
  }
  return {{"workload", top.workload},
          {"key", top.key},
          {"target", top.where},
          {"sketch", o.sketch.empty() ? json(nullptr) : json(o.sketch)},
          {"valid_of_sketch", o.sketch.empty() ? json(nullptr) : json(top.matching)},
          {"records", records},
          {"valid", top.counts.valid},
          {"invalid", top.counts.invalid()}};
}

void PrintTop(const TopOptions& o, const TopResult& top) {
  const std::string of_sketch = o.sketch.empty() ? "" : fmt::format(", sketch {}", o.sketch);
  if (top.best.empty()) {
    fmt::print("{} on {}{}: no valid records\n", top.workload, top.where, of_sketch);
  } else {
    const std::string valid = o.sketch.empty() ? fmt::format("{} valid records", top.counts.valid)
                                               : fmt::format("{} valid records of the sketch", top.matching);
    fmt::print("{} on {}{}: {}, best {}\n\n", top.workload, top.where, of_sketch, valid, top.best.size());
    fmt::print("{:>4}  {:>12}  {:>10}  {:<12}  {:<20}  {:<20}  {}\n", "rank", "median ms", "GFLOP/s", "target",
               "sketch", "measured at", "trace");
    int rank = 0;
    for (const auto& [r, sketch] : top.best) {
      fmt::print("{:>4}  {:>12.6f}  {:>10.2f}  {:<12}  {:<20}  {:<20}  {}\n", ++rank, r.median_ms, r.gflops,
                 r.target.ShortText(), sketch, r.measured_at, r.trace_hash.substr(0, 12));
    }
  }
  fmt::print("{} invalid records (failed or wrong answers) of this workload on {}\n", top.counts.invalid(), top.where);
}

CommandRun AddTop(CLI::App& parent) {
  auto o = std::make_shared<TopOptions>();
  auto* cmd = parent.add_subcommand("top", "The fastest valid records of one workload");
  cmd->footer(
      "Examples:\n"
      "  autotune db top --db autotune.db --op gemm --shape M=512,N=512,K=512 -n 5\n"
      "  autotune db top --db autotune.db --op conv2d --shape N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1 --target cuda:sm_90 --json");
  cmd->add_option("--db", o->db, "tuning database")->required();
  cmd->add_option("--op", o->op, "operator (see `autotune ops`)")->required();
  cmd->add_option("--shape", o->shape, "shape parameters, e.g. M=1024,N=1024,K=1024")->required();
  cmd->add_option("--epilogue", o->epilogue, kEpilogueHelp);
  cmd->add_option("--dtype", o->dtype, "element type: float32, float16 or bfloat16");
  cmd->add_option("--precision", o->precision, kPrecisionHelp);
  cmd->add_option("--target", o->target, "cpu, cuda, or kind:arch such as cuda:sm_90 (default: every target)");
  cmd->add_option("-n", o->n, "how many records")->check(CLI::Range(1, 1000000));
  cmd->add_option("--sketch", o->sketch,
                  "only records whose schedule this sketch made (e.g. cuda.split_k; `tune --help` lists them), to "
                  "compare schedule structures");
  AddJsonOption(*cmd, o->json, "the records, with their traces,");
  return [o]() {
    const TopResult top = FindTop(*o);
    if (!o->json.empty()) WriteOutput(o->json, TopJson(*o, top).dump(2) + "\n", "the JSON");
    else PrintTop(*o, top);
    return 0;
  };
}

// ---- export / import ------------------------------------------------------------------------------

CommandRun AddExport(CLI::App& parent) {
  struct Options {
    std::string db, out = "-";
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand("export", "Write every record as a JSON line (insertion order)");
  cmd->add_option("--db", o->db, "tuning database")->required();
  cmd->add_option("--out", o->out, "output file ('-': stdout)");
  cmd->footer(
      "Examples:\n"
      "  autotune db export --db autotune.db --out records.jsonl\n"
      "  autotune db export --db a.db | autotune db import --db b.db   # copy every record");
  return [o]() {
    auto database = OpenDatabase(o->db, db::OpenMode::kReadOnly);
    std::ofstream file;
    if (o->out != "-") {
      file.open(o->out, std::ios::binary | std::ios::trunc);
      if (!file) throw UserError{fmt::format("cannot write '{}'", o->out)};
    }
    std::ostream& out = o->out == "-" ? std::cout : file;
    auto n = db::ExportJsonl(*database, out);
    if (!n) throw UserError{fmt::format("exporting to '{}': {}", o->out, n.error().message)};
    fmt::print(stderr, "autotune: exported {} records from {} to {}\n", *n, o->db, o->out == "-" ? "stdout" : o->out);
    return 0;
  };
}

json CountsJson(const std::string& file, int64_t read, int64_t added, int64_t duplicates) {
  return {{"file", file}, {"read", read}, {"added", added}, {"duplicates", duplicates}};
}

CommandRun AddImport(CLI::App& parent) {
  struct Options {
    std::string db, in = "-";
    std::string json;  // --json: "-" for stdout, or a file
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "import", "Store records from JSON lines (db export's format); every line is checked before any is stored");
  cmd->add_option("--db", o->db, "tuning database (created if missing)")->required();
  cmd->add_option("--in", o->in, "input file ('-': stdin)");
  AddJsonOption(*cmd, o->json, "the counts");
  cmd->footer(
      "Examples:\n"
      "  autotune db import --db autotune.db --in records.jsonl\n"
      "  autotune db import --db autotune.db --in records.jsonl --json   # counts read, added, duplicates");
  return [o]() {
    std::ifstream file;
    if (o->in != "-") {
      // Records are read into memory before any is stored: a few GiB is millions of records.
      auto usable = CheckInputFile(o->in, 4096 * kMiB);
      if (!usable) throw UserError{fmt::format("cannot read '{}': {}", o->in, usable.error().message)};
      file.open(o->in, std::ios::binary);
      if (!file) throw UserError{fmt::format("cannot read '{}'", o->in)};
    }
    std::istream& in = o->in == "-" ? std::cin : file;
    const std::string name = o->in == "-" ? "stdin" : o->in;
    // Every line is checked before the database is opened: bad input creates no file.
    auto records = db::ReadJsonl(in);
    if (!records) throw UserError{fmt::format("importing {}: {}", name, records.error().message)};
    auto database = OpenDatabase(o->db, db::OpenMode::kReadWrite);
    auto counts = db::StoreRecords(*database, std::move(*records));
    if (!counts) throw UserError{fmt::format("importing {}: {}", name, counts.error().message)};
    if (!o->json.empty()) {
      WriteOutput(o->json, CountsJson(name, counts->read, counts->inserted, counts->duplicates).dump(2) + "\n",
                  "the counts");
    }
    fmt::print(stderr, "autotune: imported {} into {}: {} records, {} added, {} duplicates skipped\n", name, o->db,
               counts->read, counts->inserted, counts->duplicates);
    return 0;
  };
}

// ---- merge ----------------------------------------------------------------------------------------

CommandRun AddMerge(CLI::App& parent) {
  struct Options {
    std::string db;
    std::vector<std::string> others;
    std::string json;  // --json: "-" for stdout, or a file
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "merge", "Add the records of other databases (read-only; an older schema is fine) that are new to --db");
  cmd->add_option("--db", o->db, "tuning database to merge into (created if missing)")->required();
  cmd->add_option("others", o->others, "databases to merge from")->required();
  AddJsonOption(*cmd, o->json, "the counts");
  cmd->footer(
      "Examples:\n"
      "  autotune db merge --db all.db gpu1.db gpu2.db   # the records of two machines' jobs in one database");
  return [o]() {
    auto database = OpenDatabase(o->db, db::OpenMode::kReadWrite);
    json all = json::array();
    for (const auto& other : o->others) {
      auto counts = db::MergeDatabase(*database, other);
      if (!counts) throw UserError{counts.error().message};  // the files before it stay merged
      json entry = CountsJson(other, counts->read, counts->added, counts->duplicates);
      entry["refused"] = counts->refused;
      all.push_back(std::move(entry));
      if (o->json.empty()) {
        fmt::print("{}: {} records, {} added, {} duplicates\n", other, counts->read, counts->added, counts->duplicates);
      }
      if (counts->refused > 0) {
        fmt::print(stderr, "autotune: {}: {} records not believable, left out (first: {})\n", other, counts->refused,
                   counts->first_refusal);
      }
    }
    if (!o->json.empty()) WriteOutput(o->json, all.dump(2) + "\n", "the counts");
    return 0;
  };
}

}  // namespace

CommandRun AddDbCommand(CLI::App& app) {
  return AddCommandGroup(app, "db", "Tuning databases: stats, top, export, import, merge",
                         "`autotune db COMMAND --help` shows a command's options and examples.\n"
                         "Examples:\n"
                         "  autotune db stats --db autotune.db\n"
                         "  autotune db top --db autotune.db --op gemm --shape M=512,N=512,K=512",
                         {AddStats, AddTop, AddExport, AddImport, AddMerge});
}

}  // namespace autotune::cli
