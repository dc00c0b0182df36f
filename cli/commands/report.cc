// autotune report: an HTML page (with SVG charts made here) on what tuning achieved, read from a
// tuning database: per workload and target the best found, trials to 90% of it, time taken, and the
// best-so-far curves against trials and seconds. The pieces are in cli/report/; this file reads the
// database, writes the files and turns problems into one-line user errors.
#include <fmt/format.h>

#include <filesystem>

#include "cli/cli_error.h"
#include "cli/command.h"
#include "cli/open_database.h"
#include "cli/output.h"
#include "cli/report/html_report.h"
#include "cli/report/report_json.h"
#include "cli/report/svg_line_chart.h"
#include "cli/report/tuning_charts.h"
#include "cli/report/tuning_summary.h"
#include "db/database.h"
#include "tir/ops/operator.h"
#include "tir/version.h"

namespace autotune::cli {

namespace {

struct ReportOptions {
  std::string db, out, target, op, json;
};

// The options that select records, as the page and the errors show them.
std::string FilterText(const ReportOptions& o) {
  std::string text;
  if (!o.op.empty()) text += "--op " + o.op;
  if (!o.target.empty()) text += (text.empty() ? "" : " ") + std::string("--target ") + o.target;
  return text;
}

void CheckOperator(const std::string& op) {
  if (op.empty() || tir::BuiltinOperators().Find(op)) return;
  std::string names;
  for (const auto* def : tir::BuiltinOperators().All()) names += (names.empty() ? "" : ", ") + def->Name();
  throw UserError{fmt::format("unknown operator '{}' (operators: {})", op, names)};
}

}  // namespace

CommandRun AddReportCommand(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report", "Write an HTML report with tuning curves of a tuning database");
  cmd->add_option("--db", o->db, "tuning database (read only)")->required();
  cmd->add_option("--out", o->out, "directory for index.html and the charts as SVG files (created if missing)")
      ->required();
  cmd->add_option("--target", o->target, "only records of this target: cpu, cuda, or kind:arch such as cuda:sm_90");
  cmd->add_option("--op", o->op, "only records of this operator (see `autotune ops`)");
  AddJsonOption(*cmd, o->json, "the table, besides the HTML,");
  cmd->footer(
      "Writes DIR/index.html, one self-contained page (no script, nothing fetched), with a row per\n"
      "workload and target: records (valid/total), best latency and GFLOP/s, trials until the best so\n"
      "far reached 90% of the final best (failed trials count), the span from the first to the last\n"
      "record's measured_at (gaps between resumed runs included) and records per second of it; and per\n"
      "row two charts of the best GFLOP/s so far, against trial and against seconds, also written as\n"
      "DIR/<slug>-trials.svg and DIR/<slug>-seconds.svg.\n"
      "Examples:\n"
      "  autotune report --db autotune.db --out report/   # then open report/index.html\n"
      "  autotune report --db autotune.db --out report/ --target cuda:sm_90 --op conv2d --json summary.json");
  return [o]() {
    using namespace report;
    // Bad options are reported before the database is read.
    std::optional<db::TargetQuery> query;
    if (!o->target.empty()) query = Check(db::ParseTargetQuery(o->target));
    CheckOperator(o->op);

    auto database = OpenDatabase(o->db, db::OpenMode::kReadOnly);
    TrialGrouper grouper;
    Check(database->ForEachRecord([&](const db::TuningRecord& r) {
      if ((o->op.empty() || r.workload.op == o->op) && (!query || query->Matches(r.target))) grouper.Add(r);
      return true;
    }));
    const std::vector<WorkloadTrials> groups = grouper.Take();
    if (groups.empty()) {
      const std::string filter = FilterText(*o);
      throw UserError{filter.empty()
                          ? fmt::format("'{}' holds no tuning records: nothing to report", o->db)
                          : fmt::format("'{}' has no records matching {}: nothing to report", o->db, filter)};
    }

    std::vector<WorkloadSummary> summaries;
    for (const auto& g : groups) summaries.push_back(Summarize(g));
    const std::vector<std::string> slugs = MakeSlugs(summaries);
    std::vector<ReportSection> sections;
    int64_t records = 0;
    for (size_t i = 0; i < summaries.size(); ++i) {
      records += summaries[i].records;
      sections.push_back(
          {summaries[i], slugs[i], RenderSvg(TrialsChart(summaries[i])), RenderSvg(SecondsChart(summaries[i]))});
    }
    const ReportHeader header{o->db, db::NowIso8601(), kVersion, FilterText(*o)};

    const std::filesystem::path dir(o->out);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir)) {
      throw UserError{fmt::format("cannot create the report directory '{}'{}", o->out, ec ? ": " + ec.message() : "")};
    }
    for (const auto& sec : sections) {
      WriteOutput((dir / (sec.slug + "-trials.svg")).string(), sec.trials_svg, "a chart");
      WriteOutput((dir / (sec.slug + "-seconds.svg")).string(), sec.seconds_svg, "a chart");
    }
    const std::string index = (dir / "index.html").string();
    WriteOutput(index, RenderHtmlReport(header, sections), "the report");
    if (!o->json.empty()) WriteOutput(o->json, ReportJson(header, sections).dump(2) + "\n", "the JSON report");
    fmt::print(stderr, "autotune: wrote {} ({} workloads, {} records, {} charts)\n", index, sections.size(), records,
               2 * sections.size());
    return 0;
  };
}

}  // namespace autotune::cli
