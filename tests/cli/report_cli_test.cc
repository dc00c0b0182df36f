// `autotune report` as a user meets it: the built executable on small databases made here. It writes
// index.html and two SVG files per workload and target, and the table as JSON; a missing or
// corrupt database, no matching records and bad options end with one line and exit status 2.
// Latencies are test data; nothing is timed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "db/database.h"
#include "tests/cli/report/markup_check.h"
#include "tests/cli/run_cli.h"
#include "tests/db/db_test_util.h"

namespace autotune::db {
namespace {

using namespace autotune::db::testing;
using autotune::cli::report::testing::Count;
using autotune::cli::report::testing::PolylineVertices;
using autotune::cli::report::testing::TagBalanceError;
using autotune::testing::Lines;
using autotune::testing::RunCli;
using autotune::testing::RunResult;
using nlohmann::json;
namespace fs = std::filesystem;

// A device name that must be escaped in HTML and SVG.
const TargetInfo kOddGpu{"cuda", "sm_90", "GPU <A&B>", "580.82", "13.0"};

// gemm 64^3 on the cpu: 5 trials (2.0 ms, a build error, 1.5, 1.0, 1.2) over 30 s;
// gemm 32^3 on kOddGpu: 2 trials in one second.
std::string MakeDb(const std::string& name) {
  const std::string path = TempPath(name);
  auto db = TuningDatabase::Open(path);
  EXPECT_TRUE(db);
  const auto w = Gemm();
  auto cpu = DistinctRecords(w, CpuTarget(), 4);
  const double ms[] = {2.0, 1.5, 1.0, 1.2};
  const char* at[] = {"2026-11-29T10:00:00Z", "2026-11-29T10:00:10Z", "2026-11-29T10:00:20Z", "2026-11-29T10:00:30Z"};
  for (int i = 0; i < 4; ++i) {
    SetMedian(cpu[i], ms[i]);
    cpu[i].measured_at = at[i];
  }
  TuningRecord failed = MakeFailedRecord(w, 999, CpuTarget());
  failed.measured_at = "2026-11-29T10:00:05Z";
  cpu.insert(cpu.begin() + 1, failed);
  auto stored = (*db)->CommitBatch(cpu);
  EXPECT_TRUE(stored && *stored == 5) << "the failed record's trace must be new";
  const auto small = Gemm("M=32,N=32,K=32");
  auto gpu = DistinctRecords(small, kOddGpu, 2, 500);
  for (auto& r : gpu) r.measured_at = "2026-11-29T11:00:00Z";
  EXPECT_TRUE((*db)->CommitBatch(gpu));
  return path;
}

std::string Dir(const std::string& name) {
  const std::string dir = TempPath(name);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return dir;
}

// Exit status 2 and exactly one line, "autotune: ...", containing `expect`.
void ExpectUserError(const RunResult& r, const std::string& expect) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("autotune: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
}

TEST(ReportCli, Help) {
  auto r = RunCli("report --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("Usage:"), std::string::npos);
  for (const char* option : {"--db", "--out", "--target", "--op", "--json", "90%", "index.html"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  }
}

TEST(ReportCli, WritesThePageAndTheChartsOfEveryWorkload) {
  const std::string db = MakeDb("report.db");
  const std::string dir = Dir("report_out");
  auto r = RunCli("report --db " + db + " --out " + dir + " --json -");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("index.html (2 workloads, 7 records, 4 charts)"), std::string::npos) << r.err;
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_EQ(j["workloads"].size(), 2u);

  const std::string page = ReadBytes(dir + "/index.html");
  ASSERT_FALSE(page.empty());
  EXPECT_EQ(TagBalanceError(page), "");
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_NE(page.find(db), std::string::npos);
  EXPECT_NE(page.find("gemm[M=64,N=64,K=64]"), std::string::npos);
  EXPECT_NE(page.find("gemm[M=32,N=32,K=32]"), std::string::npos);
  EXPECT_NE(page.find("GPU &lt;A&amp;B&gt;"), std::string::npos);
  EXPECT_EQ(page.find("GPU <A&B>"), std::string::npos);
  EXPECT_EQ(Count(page, "<svg"), 4);

  // The cpu gemm: 4 of 5 valid, best 1.0 ms at trial 4, 30 s, and 90% of the best first reached there.
  const json& cpu = j["workloads"][0];
  EXPECT_EQ(cpu["workload"], "gemm[M=64,N=64,K=64]");
  EXPECT_EQ(cpu["target"]["kind"], "cpu");
  EXPECT_EQ(cpu["records"], 5);
  EXPECT_EQ(cpu["valid"], 4);
  EXPECT_DOUBLE_EQ(cpu["best_ms"].get<double>(), 1.0);
  EXPECT_EQ(cpu["trials_to_90"], 4);
  EXPECT_DOUBLE_EQ(cpu["span_s"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(cpu["candidates_per_s"].get<double>(), 5.0 / 30);
  const json& gpu = j["workloads"][1];
  EXPECT_EQ(gpu["target"]["device"], "GPU <A&B>");
  EXPECT_DOUBLE_EQ(gpu["span_s"].get<double>(), 0);
  EXPECT_TRUE(gpu["candidates_per_s"].is_null());

  std::set<std::string> files;
  for (const auto& row : j["workloads"]) {
    for (const char* key : {"trials_svg", "seconds_svg"}) {
      const std::string file = row[key];
      files.insert(file);
      const std::string svg = ReadBytes(dir + "/" + file);
      ASSERT_FALSE(svg.empty()) << file;
      EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << file;
      EXPECT_EQ(TagBalanceError(svg), "") << file;
      EXPECT_NE(svg.find(row["workload"].get<std::string>()), std::string::npos) << file;
      EXPECT_NE(page.find(svg), std::string::npos) << file << " is inline in the page";
      EXPECT_NE(page.find("href=\"" + file + "\""), std::string::npos) << file;
    }
  }
  EXPECT_EQ(files.size(), 4u);
  // Trials chart of the cpu gemm: rises at trials 1, 3 and 4, closed at trial 5: 4 points as steps.
  EXPECT_EQ(PolylineVertices(ReadBytes(dir + "/" + cpu["trials_svg"].get<std::string>())), 7);
  std::set<std::string> listed;
  for (const auto& e : fs::directory_iterator(dir)) listed.insert(e.path().filename().string());
  files.insert("index.html");
  EXPECT_EQ(listed, files);
}

TEST(ReportCli, FiltersByTargetAndOperatorAndWritesJsonToAFile) {
  const std::string db = MakeDb("filter.db");
  const std::string dir = Dir("filter_out");
  const std::string json_path = TempPath("filter.json");
  auto r = RunCli("report --db " + db + " --out " + dir + " --target cpu --op gemm --json " + json_path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  const json j = json::parse(ReadBytes(json_path), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["workloads"].size(), 1u);
  EXPECT_EQ(j["filter"], "--op gemm --target cpu");
  EXPECT_EQ(j["targets"].size(), 1u);
  const std::string page = ReadBytes(dir + "/index.html");
  EXPECT_NE(page.find("gemm[M=64,N=64,K=64]"), std::string::npos);
  EXPECT_EQ(page.find("gemm[M=32,N=32,K=32]"), std::string::npos);
  EXPECT_NE(page.find("--target cpu"), std::string::npos);
}

TEST(ReportCli, MissingOrCorruptDatabaseIsOneLine) {
  const std::string missing = TempPath("missing.db");
  ExpectUserError(RunCli("report --db " + missing + " --out " + Dir("missing_out")), "missing.db");
  EXPECT_FALSE(fs::exists(missing)) << "a report never creates a database";
  EXPECT_FALSE(fs::exists(TempPath("missing_out")));

  const std::string corrupt = TempPath("corrupt.db");
  WriteBytes(corrupt, "this is not a database, just some text that is long enough to look at\n");
  ExpectUserError(RunCli("report --db " + corrupt + " --out " + Dir("corrupt_out")), "corrupt.db");
  EXPECT_EQ(ReadBytes(corrupt), "this is not a database, just some text that is long enough to look at\n");
}

TEST(ReportCli, NoRecordsIsOneLine) {
  const std::string empty = TempPath("empty.db");
  ASSERT_TRUE(TuningDatabase::Open(empty));
  ExpectUserError(RunCli("report --db " + empty + " --out " + Dir("empty_out")), "holds no tuning records");
  EXPECT_FALSE(fs::exists(TempPath("empty_out") + "/index.html"));

  const std::string db = MakeDb("nomatch.db");
  ExpectUserError(RunCli("report --db " + db + " --out " + Dir("nomatch_out") + " --op conv2d"),
                  "no records matching --op conv2d");
  ExpectUserError(RunCli("report --db " + db + " --out " + Dir("nomatch_out") + " --target cuda:sm_80"),
                  "no records matching --target cuda:sm_80");
}

TEST(ReportCli, BadOptionsAreOneLine) {
  const std::string db = MakeDb("bad.db");
  ExpectUserError(RunCli("report --db " + db + " --out " + Dir("bad_out") + " --op gemn"), "unknown operator 'gemn'");
  ExpectUserError(RunCli("report --db " + db + " --out " + Dir("bad_out") + " --target gpu"), "gpu");
  ExpectUserError(RunCli("report --db " + db), "--out");
  // The output directory cannot be made under a regular file.
  ExpectUserError(RunCli("report --db " + db + " --out " + db + "/sub"), "cannot create the report directory");
}

}  // namespace
}  // namespace autotune::db
