// `autotune db` as a user meets it: the built executable on a small database made here; exit status
// 0 with the key figures, and 2 with one line for a missing database, a file that is not one, or a
// bad shape.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "db/database.h"
#include "tests/cli/run_cli.h"
#include "search/default_schedule.h"
#include "search/sketch.h"
#include "tests/db/db_test_util.h"

namespace autotune::db {
namespace {

using namespace autotune::db::testing;
using autotune::testing::Lines;
using autotune::testing::RunCli;
using nlohmann::json;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

const char* kShape = "--op gemm --shape M=64,N=64,K=64";

// 4 valid CPU records (medians 1.0 .. 1.3), 1 failed CPU record, 2 CUDA records, another workload.
std::string MakeDb(const std::string& name) {
  const std::string path = TempPath(name);
  auto db = TuningDatabase::Open(path);
  EXPECT_TRUE(db);
  const auto w = Gemm();
  auto records = DistinctRecords(w, CpuTarget(), 4);
  records.push_back(MakeFailedRecord(w, 99, CpuTarget()));
  auto cuda = DistinctRecords(w, CudaTarget(), 2, 200);
  SetMedian(cuda[0], 0.05);
  records.insert(records.end(), cuda.begin(), cuda.end());
  records.push_back(MakeRecord(Gemm("M=32,N=32,K=32"), 1, CpuTarget(), 0.2));
  EXPECT_TRUE((*db)->CommitBatch(records));
  return path;
}

TEST(DbCli, HelpOnEverySubcommand) {
  for (const char* sub : {"db", "db stats", "db top", "db export", "db import", "db merge"}) {
    auto r = RunCli(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << sub;
  }
}

TEST(DbCli, StatsCountsPerTarget) {
  const std::string path = MakeDb("stats.db");
  auto r = RunCli("db stats --db " + path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("schema 2; 2 workloads, 8 records, 0 cost models"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu:x86_64 (Test CPU; toolkit cc (test) 12.2)"), std::string::npos) << r.out;
  auto j = RunCli("db stats --json --db " + path);
  ASSERT_EQ(j.status, 0) << j.err;
  const json s = json::parse(j.out);
  EXPECT_EQ(s["records"], 8);
  ASSERT_EQ(s["targets"].size(), 2u);
  EXPECT_EQ(s["targets"][0]["target"]["kind"], "cpu");
  EXPECT_EQ(s["targets"][0]["workloads"], 2);
  EXPECT_EQ(s["targets"][0]["valid"], 5);
  EXPECT_EQ(s["targets"][0]["invalid"], 1);
  EXPECT_EQ(s["targets"][1]["records"], 2);
}

TEST(DbCli, TopRanksValidRecordsAndCountsInvalidOnes) {
  const std::string path = MakeDb("top.db");
  auto r = RunCli("db top --db " + path + " " + kShape + " --target cpu -n 3");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("gemm[M=64,N=64,K=64] on cpu: 4 valid records, best 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("   1      1.000000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("   3      1.200000"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("1.300000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 invalid records"), std::string::npos) << r.out;

  auto all = RunCli("db top --json --db " + path + " " + kShape);
  ASSERT_EQ(all.status, 0) << all.err;
  const json j = json::parse(all.out);
  ASSERT_EQ(j["records"].size(), 6u);
  EXPECT_EQ(j["records"][0]["target"]["kind"], "cuda");  // 0.05 ms: fastest of every target
  EXPECT_EQ(j["records"][0]["rank"], 1);
  EXPECT_TRUE(j["records"][0]["trace"].is_object());
  EXPECT_EQ(j["invalid"], 1);

  auto none = RunCli("db top --db " + path + " --op gemm --shape M=8,N=8,K=8 --target cuda:sm_80");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_NE(none.out.find("no valid records"), std::string::npos) << none.out;
}

// A gemm with a long reduction on cuda: schedules of the tiled and the split-K sketch side by side.
TEST(DbCli, TopNamesEachRecordsSketchAndKeepsOneWhenAsked) {
  const std::string path = TempPath("sketches.db");
  const tir::Workload w = Gemm("M=16,N=4096,K=4096");
  std::vector<TuningRecord> records;
  for (const char* name : {"cuda.split_k", "cuda.tiled"}) {  // split-K the slower: 2.0 ms and more
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      auto sch = search::RandomScheduleOfSketch(w, *search::FindSketch(name), seed);
      ASSERT_TRUE(sch) << sch.error().message;
      const double ms = (name[5] == 's' ? 2.0 : 1.0) + 0.1 * static_cast<double>(seed);
      records.push_back(MakeRecord(*sch, CudaTarget(), ms));
    }
  }
  {
    auto db = TuningDatabase::Open(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE((*db)->CommitBatch(records));
  }
  const std::string shape = " --op gemm --shape M=16,N=4096,K=4096";
  auto all = RunCli("db top --db " + path + shape + " -n 4");
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_NE(all.out.find("6 valid records, best 4"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("cuda.tiled"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("cuda.split_k"), std::string::npos) << all.out;  // rank 4

  auto split = RunCli("db top --json --db " + path + shape + " --sketch cuda.split_k -n 2");
  ASSERT_EQ(split.status, 0) << split.err;
  const json j = json::parse(split.out);
  ASSERT_EQ(j["records"].size(), 2u);  // past the three faster tiled records
  for (const auto& r : j["records"]) EXPECT_EQ(r["sketch"], "cuda.split_k");
  EXPECT_DOUBLE_EQ(j["records"][0]["median_ms"].get<double>(), 2.1);
  EXPECT_EQ(j["target"], "any target");
  EXPECT_EQ(j["sketch"], "cuda.split_k");
  EXPECT_EQ(j["valid_of_sketch"], 3);
  EXPECT_EQ(j["valid"], 6);

  auto none = RunCli("db top --db " + path + shape + " --sketch cuda.im2col");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_NE(none.out.find("no valid records"), std::string::npos) << none.out;
}

TEST(DbCli, ExportImportRoundTripAndMerge) {
  const std::string a = MakeDb("a.db"), b = TempPath("b.db"), c = TempPath("c.db");
  const std::string first = TempPath("first.jsonl"), second = TempPath("second.jsonl");
  auto e = RunCli("db export --db " + a + " --out " + first);
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.err.find("exported 8 records"), std::string::npos) << e.err;
  auto to_stdout = RunCli("db export --db " + a);
  ASSERT_EQ(to_stdout.status, 0);
  EXPECT_EQ(to_stdout.out, ReadBytes(first));
  EXPECT_EQ(Lines(to_stdout.out), 8);

  auto i = RunCli("db import --db " + b + " --in " + first);
  ASSERT_EQ(i.status, 0) << i.err;
  EXPECT_NE(i.err.find("8 records, 8 added, 0 duplicates skipped"), std::string::npos) << i.err;
  auto again = RunCli("db import --json --db " + b + " < " + first);  // stdin
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(json::parse(again.out)["added"], 0);
  EXPECT_EQ(json::parse(again.out)["duplicates"], 8);
  ASSERT_EQ(RunCli("db export --db " + b + " --out " + second).status, 0);
  EXPECT_EQ(ReadBytes(second), ReadBytes(first));

  auto m = RunCli("db merge --db " + c + " " + a + " " + b);
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_NE(m.out.find(a + ": 8 records, 8 added, 0 duplicates"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find(b + ": 8 records, 0 added, 8 duplicates"), std::string::npos) << m.out;
  auto mj = RunCli("db merge --json --db " + c + " " + a);
  ASSERT_EQ(mj.status, 0) << mj.err;
  EXPECT_EQ(json::parse(mj.out)[0]["added"], 0);
  auto self = RunCli("db merge --db " + c + " " + c);
  EXPECT_EQ(self.status, 2);
  EXPECT_NE(self.err.find("into itself"), std::string::npos) << self.err;
}

TEST(DbCli, UserErrorsExitWithTwoAndOneLine) {
  const std::string good = MakeDb("good.db"), missing = TempPath("missing.db"), text = TempPath("notes.db");
  WriteBytes(text, "not a database\n");
  const std::string bad_jsonl = TempPath("bad.jsonl"), good_jsonl = TempPath("good.jsonl");
  WriteBytes(bad_jsonl, "{}\n");
  ASSERT_EQ(RunCli("db export --db " + good + " --out " + good_jsonl).status, 0);
  struct Case {
    std::string args, expected;
  };
  const std::vector<Case> cases = {
      {"db stats --db " + missing, "No such file"},
      {"db top --db " + missing + " " + kShape, "No such file"},
      {"db export --db " + missing, "No such file"},
      {"db merge --db " + TempPath("into.db") + " " + missing, "No such file"},
      {"db stats --db " + text, "not an SQLite database"},
      {"db export --db " + text, "not an SQLite database"},
      {"db import --db " + text + " --in " + bad_jsonl, "line 1: workload: is missing"},
      {"db import --db " + text + " --in " + good_jsonl, "not an SQLite database"},
      {"db merge --db " + text + " " + good, "not an SQLite database"},
      {"db top --db " + good + " --op gemm --shape M=0,N=4", "M"},
      {"db top --db " + good + " --op gemm --shape M=4,N=4,K=4 --target gpu", "unknown target 'gpu'"},
      {"db top --db " + good + " " + kShape + " --sketch cuda.tiles", "unknown sketch 'cuda.tiles'"},
      {"db import --db " + TempPath("new.db") + " --in " + TempPath("no.jsonl"), "cannot read"},
      {"db", "subcommand"},
  };
  for (const Case& c : cases) {
    auto r = RunCli(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out << r.err;
    EXPECT_EQ(Lines(r.err), 1) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("autotune: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << c.args << "\n" << r.err;
  }
  EXPECT_FALSE(Exists(missing));  // read-only commands never create a database
  EXPECT_FALSE(Exists(TempPath("new.db")));
  EXPECT_EQ(ReadBytes(text), "not a database\n");
}

}  // namespace
}  // namespace autotune::db
