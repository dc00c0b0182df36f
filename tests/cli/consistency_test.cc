// The command line behaves the same way everywhere: --json on every command that has it, help that
// fits a terminal with defaults and examples, output paths checked before the work, the man page.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_cli.h"
#include "tests/temp_path.h"

namespace {

using autotune::testing::Lines;
using autotune::testing::RunCli;

std::string Temp(const std::string& name) { return autotune::testing::TestTempPath("autotune_consistency", name); }

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* kCommands[] = {"ops",        "show",    "measure",   "targets",     "lookup", "db stats", "db top",
                           "db export",  "db import", "db merge", "tune",        "networks", "model train",
                           "model eval", "model builtin", "worker", "report", "db", "model"};

// Every command's help fits a terminal, has examples, and names types and defaults without CLI11's
// validator text ("INT:INT in [1 - 4096]"), empty lists ("=[]") or "not given" placeholders.
TEST(CliConsistency, HelpFitsATerminalAndShowsDefaults) {
  for (const std::string c : kCommands) {
    const auto r = RunCli(c + " --help");
    ASSERT_EQ(r.status, 0) << c;
    EXPECT_NE(r.out.find("Examples:"), std::string::npos) << c;
    for (const char* noise : {":INT", ":FLOAT", " in [", "=[]", "Excludes:", "Needs:"}) {
      EXPECT_EQ(r.out.find(noise), std::string::npos) << c << " shows '" << noise << "':\n" << r.out;
    }
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_LE(line.size(), 120u) << c << ": " << line;  // 100 columns of text; a long option name may push it
    }
  }
  const auto tune = RunCli("tune --help").out;
  EXPECT_NE(tune.find("--trials INT=1000"), std::string::npos) << tune;              // a default
  EXPECT_NE(tune.find("--population INT=2048"), std::string::npos) << tune;          // the search's own
  EXPECT_NE(tune.find("--batch INT  "), std::string::npos) << tune;                  // not given: no "=0"
  const std::string words = std::regex_replace(tune, std::regex("\\s+"), " ");       // across wrapped lines
  EXPECT_NE(words.find("holds (not with --trials)"), std::string::npos) << tune;      // --more's exclusion
}

TEST(CliConsistency, JsonAloneGoesToStdoutAndWithAFileToTheFile) {
  for (const std::string c : {"ops", "targets", "networks"}) {
    const auto to_stdout = RunCli(c + " --json");
    ASSERT_EQ(to_stdout.status, 0) << c << to_stdout.err;
    EXPECT_TRUE(nlohmann::json::accept(to_stdout.out)) << c;
    const std::string file = Temp(c + ".json");
    const auto to_file = RunCli(c + " --json " + file);
    ASSERT_EQ(to_file.status, 0) << c << to_file.err;
    EXPECT_TRUE(to_file.out.empty()) << c << ": " << to_file.out;
    EXPECT_EQ(nlohmann::json::parse(Slurp(file)), nlohmann::json::parse(to_stdout.out)) << c;
  }
  // A network's name after --json is the network, not a file name.
  const auto tasks = RunCli("networks --json bert_base");
  ASSERT_EQ(tasks.status, 0) << tasks.err;
  EXPECT_EQ(nlohmann::json::parse(tasks.out)[0]["op"], "gemm");
}

TEST(CliConsistency, MeasureJsonOnStdoutIsTheJsonAlone) {
  const auto r = RunCli("measure --op gemm --shape M=8,N=8,K=8 --target cpu --min-repeat-ms 1 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["correct"].get<bool>());
  EXPECT_NE(r.err.find("gemm[M=8,N=8,K=8]  cpu"), std::string::npos) << r.err;
}

TEST(CliConsistency, AnOutputThatCannotBeWrittenFailsBeforeTheWork) {
  for (const std::string c : {"measure --op gemm --shape M=8,N=8,K=8 --target cpu", "tune --op gemm --shape M=8,N=8,K=8 --target cpu --trials 1",
                              "ops"}) {
    const auto r = RunCli(c + " --json /nonexistent/dir/x.json");
    EXPECT_EQ(r.status, 2) << c;
    EXPECT_EQ(Lines(r.err), 1) << c << ": " << r.err;
    EXPECT_NE(r.err.find("no directory '/nonexistent/dir'"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("building"), std::string::npos) << "nothing was measured: " << r.err;
  }
}

TEST(CliConsistency, JsonNeverOverwritesAFileThatIsNotJson) {
  // `db merge --json a.db b.db` hands a.db to --json: the database must survive.
  const std::string db = Temp("keep.db");
  ASSERT_EQ(RunCli("measure --op gemm --shape M=8,N=8,K=8 --target cpu --min-repeat-ms 1 --db " + db).status, 0);
  const std::string before = Slurp(db);
  const auto r = RunCli("db merge --db " + Temp("into.db") + " --json " + db + " " + db);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("is not a JSON file"), std::string::npos) << r.err;
  EXPECT_EQ(Slurp(db), before);
}

TEST(CliConsistency, MeasureTakesTheBestTraceOfATuneReport) {
  const std::string report = Temp("tune.json"), db = Temp("tune.db");
  const auto t = RunCli("tune --op gemm --shape M=16,N=16,K=16 --target cpu --trials 4 --batch-size 4 --min-repeat-ms 1 --db " +
                        db + " --json " + report);
  ASSERT_EQ(t.status, 0) << t.err;
  const auto tuned = nlohmann::json::parse(Slurp(report));
  const auto m = RunCli("measure --op gemm --shape M=16,N=16,K=16 --target cpu --min-repeat-ms 1 --json --trace " + report);
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_EQ(nlohmann::json::parse(m.out)["trace"], tuned["tasks"][0]["best_trace"]);
  // Another workload is not in the report: one line naming what is.
  const auto other = RunCli("measure --op gemm --shape M=32,N=16,K=16 --target cpu --trace " + report);
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.err.find("has no task gemm[M=32,N=16,K=16] (its tasks: gemm[M=16,N=16,K=16])"), std::string::npos)
      << other.err;
}

TEST(CliConsistency, ModelCommandsTakeTheTargetOfTheRecords) {
  const std::string db = Temp("cpu_records.db");
  ASSERT_EQ(RunCli("tune --op gemm --shape M=16,N=16,K=16 --target cpu --trials 40 --batch-size 20 --min-repeat-ms 1 --db " + db).status, 0);
  const auto trained = RunCli("model train --db " + db + " --out " + Temp("m.json"));
  EXPECT_EQ(trained.status, 0) << trained.err;
  EXPECT_NE(trained.err.find("cpu"), std::string::npos) << trained.err;
  const auto empty = RunCli("model train --db " + Temp("none.db") + " --out " + Temp("n.json"));
  EXPECT_EQ(empty.status, 2);
}

TEST(CliConsistency, TheManPageHasEveryCommand) {
  const std::string page = Slurp(AUTOTUNE_MAN_PAGE);
  ASSERT_FALSE(page.empty()) << "no man page at " << AUTOTUNE_MAN_PAGE;
  EXPECT_EQ(page.rfind(".TH AUTOTUNE 1", 0), 0u);
  for (const std::string c : kCommands) EXPECT_NE(page.find(".SS autotune " + c + "\n"), std::string::npos) << c;
}

}  // namespace
