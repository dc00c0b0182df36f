#include "cli/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "cli/report/escape.h"
#include "cli/report/number_format.h"
#include "cli/report/tuning_charts.h"

namespace autotune::cli::report {

namespace {

// Kept short and plain: the page must read well printed and in any browser, without a script.
constexpr const char* kStyle = R"css(
body { font-family: Helvetica, Arial, sans-serif; color: #222; margin: 24px 32px; max-width: 1320px; }
h1 { font-size: 22px; margin: 0 0 12px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 14px; margin: 22px 0 4px; font-family: Menlo, Consolas, monospace; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: 2px 14px; margin: 0; font-size: 13px; }
dl.meta dt { font-weight: bold; color: #555; }
dl.meta dd { margin: 0; }
dl.meta ul { margin: 0; padding-left: 18px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; border-bottom: 2px solid #ccc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wl { font-family: Menlo, Consolas, monospace; font-size: 12px; }
tr:hover td { background: #fafafa; }
p.note, p.stats { font-size: 12px; color: #555; max-width: 1000px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
figure { margin: 0; }
figcaption { font-size: 11px; color: #666; }
a { color: #1f6fb4; }
)css";

std::string Cell(const std::string& text, bool number = true) {
  return fmt::format("<td{}>{}</td>", number ? " class=\"num\"" : "", EscapeMarkup(text));
}

std::string SlugPart(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '-';
  return out;
}

std::string SpanText(const WorkloadSummary& s) { return s.span_s ? fmt::format("{:.0f}", *s.span_s) : kNoValue; }
std::string RateText(const WorkloadSummary& s) {
  return s.candidates_per_s ? FormatSignificant(*s.candidates_per_s, 3, 2) : kNoValue;
}
std::string ReachText(const WorkloadSummary& s) {
  return s.trials_to_reach ? std::to_string(*s.trials_to_reach) : kNoValue;
}

std::string TableRow(const ReportSection& sec) {
  const WorkloadSummary& s = sec.summary;
  std::string row = "<tr>";
  row += fmt::format("<td class=\"wl\"><a href=\"#{}\">{}</a></td>", EscapeMarkup(sec.slug),
                     EscapeMarkup(s.workload.CanonicalText()));
  row += fmt::format("<td title=\"{}\">{}</td>", EscapeMarkup(s.target.Text()),
                     EscapeMarkup(s.target.ShortText() + " (" + s.target.device + ")"));
  row += Cell(fmt::format("{}/{}", s.valid, s.records));
  row += Cell(FormatMs(s.best_ms));
  row += Cell(FormatGflops(s.best_gflops));
  row += Cell(ReachText(s));
  row += Cell(SpanText(s));
  row += Cell(RateText(s));
  return row + "</tr>\n";
}

std::string Figure(const std::string& svg, const std::string& file) {
  return fmt::format("<figure>\n{}<figcaption><a href=\"{}\">{}</a></figcaption>\n</figure>\n", svg, EscapeMarkup(file),
                     EscapeMarkup(file));
}

std::string Section(const ReportSection& sec) {
  const WorkloadSummary& s = sec.summary;
  std::string out =
      fmt::format("<section id=\"{}\">\n<h3>{}</h3>\n", EscapeMarkup(sec.slug), EscapeMarkup(WorkloadTitle(s)));
  out += fmt::format(
      "<p class=\"stats\">{} records, {} valid; best {} ms, {} GFLOP/s; {} trials to {:.0f}% of the best; "
      "{} s from first to last record; workload key {}</p>\n",
      s.records, s.valid, EscapeMarkup(FormatMs(s.best_ms)), EscapeMarkup(FormatGflops(s.best_gflops)),
      EscapeMarkup(ReachText(s)), kReachShare * 100, EscapeMarkup(SpanText(s)), EscapeMarkup(s.workload.key));
  out += "<div class=\"charts\">\n";
  out += Figure(sec.trials_svg, sec.slug + "-trials.svg");
  out += Figure(sec.seconds_svg, sec.slug + "-seconds.svg");
  return out + "</div>\n</section>\n";
}

}  // namespace

std::vector<std::string> MakeSlugs(const std::vector<WorkloadSummary>& summaries) {
  std::vector<std::string> slugs;
  std::set<std::string> taken;
  for (const auto& s : summaries) {
    const std::string base =
        SlugPart(fmt::format("{}_{}_{}-{}", s.workload.op, s.workload.key.substr(0, 12), s.target.kind, s.target.arch));
    std::string slug = base;
    for (int n = 2; !taken.insert(slug).second; ++n) slug = fmt::format("{}-{}", base, n);
    slugs.push_back(slug);
  }
  return slugs;
}

std::vector<std::string> TargetsPresent(const std::vector<ReportSection>& sections) {
  std::vector<std::string> targets;
  for (const auto& sec : sections) {
    std::string t = sec.summary.target.Text();
    if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(std::move(t));
  }
  return targets;
}

std::string RenderHtmlReport(const ReportHeader& h, const std::vector<ReportSection>& sections) {
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += fmt::format("<title>autotune report: {}</title>\n", EscapeMarkup(h.database));
  page += fmt::format("<style>{}</style>\n</head>\n<body>\n", kStyle);
  page += "<h1>autotune tuning report</h1>\n<dl class=\"meta\">\n";
  page += fmt::format("<dt>Database</dt><dd>{}</dd>\n", EscapeMarkup(h.database));
  page += fmt::format("<dt>Generated</dt><dd>{}</dd>\n", EscapeMarkup(h.generated_at));
  page += fmt::format("<dt>autotune</dt><dd>{}</dd>\n", EscapeMarkup(h.version));
  page += "<dt>Targets</dt><dd><ul>\n";
  for (const auto& t : TargetsPresent(sections)) page += fmt::format("<li>{}</li>\n", EscapeMarkup(t));
  page += "</ul></dd>\n";
  if (!h.filter.empty()) page += fmt::format("<dt>Selected</dt><dd>{}</dd>\n", EscapeMarkup(h.filter));
  page += "</dl>\n";

  page += fmt::format("<h2>Workloads ({})</h2>\n<table>\n<thead><tr>", sections.size());
  page +=
      "<th>workload</th><th>target</th><th class=\"num\">records<br>valid/total</th>"
      "<th class=\"num\">best<br>ms</th><th class=\"num\">best<br>GFLOP/s</th>";
  page += fmt::format("<th class=\"num\">trials to<br>{:.0f}% of best</th>", kReachShare * 100);
  page += "<th class=\"num\">span<br>s</th><th class=\"num\">candidates<br>per s</th></tr></thead>\n<tbody>\n";
  for (const auto& sec : sections) page += TableRow(sec);
  page += "</tbody>\n</table>\n";
  page += fmt::format(
      "<p class=\"note\">Trials count every record in the order it was stored, failed ones included; "
      "\"trials to {0:.0f}% of best\" is the first trial after which the best so far reached {0:.0f}% of the "
      "final best throughput. The span runs from the first record's measured_at to the last one's "
      "(1 s resolution) and includes any gaps between resumed runs, so candidates per second "
      "(records / span) understates the rate while tuning when a job was resumed.</p>\n",
      kReachShare * 100);

  page += "<h2>Tuning curves</h2>\n";
  for (const auto& sec : sections) page += Section(sec);
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace autotune::cli::report
