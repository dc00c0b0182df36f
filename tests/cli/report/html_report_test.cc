// The report page and its JSON: one well-formed, self-contained page with the header, a table row
// and two inline charts per workload, everything from the database escaped; unique file names.
#include "cli/report/html_report.h"

#include <gtest/gtest.h>

#include "cli/report/number_format.h"
#include "cli/report/report_json.h"
#include "cli/report/tuning_charts.h"
#include "tests/cli/report/markup_check.h"

namespace autotune::cli::report {
namespace {

using testing::Count;
using testing::TagBalanceError;

WorkloadSummary Summary(const std::string& key, const std::string& device, std::optional<double> best) {
  WorkloadSummary s;
  s.workload.key = key;
  s.workload.op = "gemm";
  s.workload.shape = {{"M", 64}, {"N", 32}, {"K", 16}};
  s.workload.epilogue = "bias,relu";
  s.target = {"cuda", "sm_90", device, "580.82", "13.0"};
  s.records = 10;
  s.valid = best ? 8 : 0;
  if (best) {
    s.best_gflops = best;
    s.best_ms = 0.0123456;
    s.trials_to_reach = 7;
    s.by_trial = {{1, *best / 2, true}, {7, *best, true}, {10, *best, false}};
  }
  s.span_s = 42;
  s.candidates_per_s = 10.0 / 42;
  return s;
}

std::vector<ReportSection> Sections(const std::vector<WorkloadSummary>& summaries) {
  const auto slugs = MakeSlugs(summaries);
  std::vector<ReportSection> out;
  for (size_t i = 0; i < summaries.size(); ++i) {
    out.push_back(
        {summaries[i], slugs[i], RenderSvg(TrialsChart(summaries[i])), RenderSvg(SecondsChart(summaries[i]))});
  }
  return out;
}

const ReportHeader kHeader{"/data/<tuning>&.db", "2026-11-29T10:00:00Z", "0.1.0", "--op gemm"};

TEST(HtmlReport, IsOneWellFormedSelfContainedPage) {
  const auto sections =
      Sections({Summary("0123456789abcdef", "NVIDIA H200", 1234.5), Summary("fedcba", "Dev<ice>&\"x\"", {})});
  const std::string page = RenderHtmlReport(kHeader, sections);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>\n<html", 0), 0u);
  EXPECT_EQ(TagBalanceError(page), "");
  EXPECT_NE(page.find("<style>"), std::string::npos);
  // Nothing to fetch and nothing to run.
  for (const char* never : {"<script", "<link", "src=", "http://", "https://", "@import"}) {
    std::string rest = page;
    // The SVG namespace is a name, not a fetch.
    for (size_t at; (at = rest.find("http://www.w3.org/2000/svg")) != std::string::npos;) rest.erase(at, 26);
    EXPECT_EQ(rest.find(never), std::string::npos) << never;
  }
  EXPECT_EQ(Count(page, "<svg"), 4);
  EXPECT_EQ(Count(page, "<tr>"), 3);  // header row and one per workload
}

TEST(HtmlReport, HeaderTableAndSectionsShowTheFiguresEscaped) {
  const auto sections =
      Sections({Summary("0123456789abcdef", "NVIDIA H200", 1234.5), Summary("fedcba", "Dev<ice>&\"x\"", {})});
  const std::string page = RenderHtmlReport(kHeader, sections);
  EXPECT_NE(page.find("/data/&lt;tuning&gt;&amp;.db"), std::string::npos);
  EXPECT_EQ(page.find("<tuning>"), std::string::npos);
  EXPECT_NE(page.find("2026-11-29T10:00:00Z"), std::string::npos);
  EXPECT_NE(page.find("<dd>0.1.0</dd>"), std::string::npos);
  EXPECT_NE(page.find("<dd>--op gemm</dd>"), std::string::npos);
  EXPECT_NE(page.find("<li>cuda:sm_90 (NVIDIA H200; driver 580.82; toolkit 13.0)</li>"), std::string::npos);
  EXPECT_NE(page.find("Dev&lt;ice&gt;&amp;&quot;x&quot;"), std::string::npos);
  EXPECT_EQ(page.find("Dev<ice>"), std::string::npos);
  // The first row: workload linking to its section, valid/total, best ms and GFLOP/s, trials, span, rate.
  EXPECT_NE(page.find("<a href=\"#gemm_0123456789ab_cuda-sm_90\">gemm[M=64,N=32,K=16]+bias,relu</a>"),
            std::string::npos);
  for (const char* cell : {">8/10<", ">0.01235<", ">1234.5<", ">7<", ">42<", ">0.238<"}) {
    EXPECT_NE(page.find(cell), std::string::npos) << cell;
  }
  EXPECT_NE(page.find(">0/10<"), std::string::npos);  // the second row has no valid record
  EXPECT_NE(page.find("<section id=\"gemm_0123456789ab_cuda-sm_90\">"), std::string::npos);
  EXPECT_NE(page.find("href=\"gemm_0123456789ab_cuda-sm_90-trials.svg\""), std::string::npos);
  EXPECT_NE(page.find("href=\"gemm_fedcba_cuda-sm_90-seconds.svg\""), std::string::npos);
  EXPECT_NE(page.find("gaps between resumed runs"), std::string::npos);
}

TEST(HtmlReport, SlugsAreFileNameSafeAndUnique) {
  auto a = Summary("0123456789abcdef", "NVIDIA H200", 1);
  auto b = a;
  b.target.device = "NVIDIA H100";  // same arch, another device: another row with the same base name
  auto c = a;
  c.target.arch = "sm_90a/../x";
  const auto slugs = MakeSlugs({a, b, c});
  EXPECT_EQ(slugs[0], "gemm_0123456789ab_cuda-sm_90");
  EXPECT_EQ(slugs[1], "gemm_0123456789ab_cuda-sm_90-2");
  EXPECT_EQ(slugs[2], "gemm_0123456789ab_cuda-sm_90a----x");
}

TEST(NumberFormat, SignificantDigitsWithoutExponents) {
  EXPECT_EQ(FormatMs(0.0123456), "0.01235");
  EXPECT_EQ(FormatMs(53.7), "53.70");
  EXPECT_EQ(FormatMs(12345.6), "12346");
  EXPECT_EQ(FormatMs(std::nullopt), "—");
  EXPECT_EQ(FormatGflops(1234.56), "1234.6");
  EXPECT_EQ(FormatGflops(20500.39), "20500.4");
  EXPECT_EQ(FormatGflops(0.524337), "0.5243");
  EXPECT_EQ(FormatGflops(std::nullopt), "—");
  EXPECT_EQ(FormatSignificant(0.001104, 3, 2), "0.00110");
  EXPECT_EQ(FormatSignificant(5.546, 3, 2), "5.55");
}

TEST(ReportJson, TheTableWithNullsWhereThereIsNoValue) {
  const auto sections = Sections({Summary("0123456789abcdef", "NVIDIA H200", 1234.5), Summary("fedcba", "X", {})});
  const nlohmann::json j = ReportJson(kHeader, sections);
  EXPECT_EQ(j["database"], kHeader.database);
  EXPECT_EQ(j["autotune_version"], "0.1.0");
  ASSERT_EQ(j["targets"].size(), 2u);
  ASSERT_EQ(j["workloads"].size(), 2u);
  const auto& row = j["workloads"][0];
  EXPECT_EQ(row["workload"], "gemm[M=64,N=32,K=16]+bias,relu");
  EXPECT_EQ(row["shape"], "M=64,N=32,K=16");
  EXPECT_EQ(row["target"]["arch"], "sm_90");
  EXPECT_EQ(row["records"], 10);
  EXPECT_EQ(row["valid"], 8);
  EXPECT_DOUBLE_EQ(row["best_gflops"].get<double>(), 1234.5);
  EXPECT_EQ(row["trials_to_90"], 7);
  EXPECT_DOUBLE_EQ(row["span_s"].get<double>(), 42);
  EXPECT_EQ(row["trials_svg"], "gemm_0123456789ab_cuda-sm_90-trials.svg");
  const auto& none = j["workloads"][1];
  EXPECT_TRUE(none["best_ms"].is_null());
  EXPECT_TRUE(none["best_gflops"].is_null());
  EXPECT_TRUE(none["trials_to_90"].is_null());
}

}  // namespace
}  // namespace autotune::cli::report
