// TuningDatabase: storing batches, the queries the search and the lookup library make, cost models,
// and opening files that are not (usable) autotune databases without touching them.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <random>

#include "db/database.h"
#include "db/schema.h"
#include "db/sqlite.h"
#include "tests/db/db_test_util.h"

namespace autotune::db {
namespace {

using namespace autotune::db::testing;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

TEST(DbStore, CommitBatchStoresRecordsAndSkipsTracesAlreadyMeasuredOnTheTarget) {
  auto db = OpenNew("commit.db");
  const auto w = Gemm();
  auto records = DistinctRecords(w, CpuTarget(), 4);
  records.push_back(MakeFailedRecord(w, 500, CudaTarget()));
  auto n = db->CommitBatch(records);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 5);
  EXPECT_EQ(AllRecords(*db), records);  // every field comes back, in insertion order

  // The same traces again: skipped. The same trace on another target: a new record.
  auto again = records;
  TuningRecord elsewhere = records[0];
  elsewhere.target = CudaTarget("sm_80");
  again.push_back(elsewhere);
  n = db->CommitBatch(again);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(AllRecords(*db).size(), 6u);
  EXPECT_EQ(*db->CommitBatch({}), 0);
}

TEST(DbStore, MalformedBatchStoresNothing) {
  auto db = OpenNew("malformed.db");
  const auto w = Gemm();
  auto good = DistinctRecords(w, CpuTarget(), 2);
  struct Case {
    const char* what;
    std::function<void(TuningRecord&)> spoil;
  };
  const Case cases[] = {
      {"workload key", [](TuningRecord& r) { r.workload.key.clear(); }},
      {"trace hash", [](TuningRecord& r) { r.trace_hash.clear(); }},
      {"finite", [](TuningRecord& r) { r.median_ms = std::nan(""); }},
      {"finite", [](TuningRecord& r) { r.latencies_ms.push_back(INFINITY); }},
      {"info_json", [](TuningRecord& r) { r.info_json = "[1,2]"; }},
  };
  for (const auto& c : cases) {
    auto batch = good;
    c.spoil(batch[1]);
    auto n = db->CommitBatch(batch);
    ASSERT_FALSE(n) << c.what;
    EXPECT_NE(n.error().message.find(c.what), std::string::npos) << n.error().message;
    EXPECT_NE(n.error().message.find("record 2"), std::string::npos) << n.error().message;
  }
  EXPECT_TRUE(AllRecords(*db).empty());
}

TEST(DbQuery, BestIsTheFastestValidRecordsOfMatchingTargets) {
  auto db = OpenNew("best.db");
  const auto w = Gemm(), other = Gemm("M=128,N=64,K=32");
  auto cpu = DistinctRecords(w, CpuTarget(), 4);  // medians 1.0 .. 1.3
  SetMedian(cpu[0], 1.3);  // fastest is now cpu[3]
  SetMedian(cpu[3], 1.0);
  auto sm90 = DistinctRecords(w, CudaTarget("sm_90"), 2, 100);
  auto sm80 = DistinctRecords(w, CudaTarget("sm_80"), 2, 200);
  SetMedian(sm80[0], 0.01);
  std::vector<TuningRecord> all = cpu;
  all.insert(all.end(), sm90.begin(), sm90.end());
  all.insert(all.end(), sm80.begin(), sm80.end());
  all.push_back(MakeFailedRecord(w, 300, CpuTarget()));
  TuningRecord wrong = MakeRecord(w, 301, CpuTarget(), 0.001);  // fastest, but a wrong answer
  wrong.correct = false;
  wrong.error_kind = "WRONG_ANSWER";
  all.push_back(wrong);
  all.push_back(MakeRecord(other, 1, CpuTarget(), 0.5));
  ASSERT_TRUE(db->CommitBatch(all));

  auto best = db->Best(w.Key(), TargetQuery{"cpu", ""}, 3);
  ASSERT_TRUE(best) << best.error().message;
  ASSERT_EQ(best->size(), 3u);
  EXPECT_EQ((*best)[0], cpu[3]);
  EXPECT_EQ((*best)[1], cpu[1]);
  EXPECT_EQ((*best)[2], cpu[2]);
  EXPECT_EQ(db->Best(w.Key(), TargetQuery{"cpu", ""}, 0)->size(), 4u);  // 0: all valid ones
  auto cuda = db->Best(w.Key(), TargetQuery{"cuda", ""}, 10);
  ASSERT_EQ(cuda->size(), 4u);
  EXPECT_EQ((*cuda)[0], sm80[0]);
  auto only90 = db->Best(w.Key(), TargetQuery{"cuda", "sm_90"}, 10);
  ASSERT_EQ(only90->size(), 2u);
  EXPECT_EQ((*only90)[0].target, CudaTarget("sm_90"));
  EXPECT_TRUE(db->Best("no such key", TargetQuery{"cpu", ""}, 10)->empty());

  auto counts = db->CountRecords(w.Key(), TargetQuery{"cpu", ""});
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->records, 6);
  EXPECT_EQ(counts->valid, 4);
  EXPECT_EQ(counts->invalid(), 2);
  EXPECT_EQ(db->CountRecords(w.Key(), std::nullopt)->records, 10);

  auto each = db->BestOfEachWorkload("gemm", TargetQuery{"cpu", ""}, 2);
  ASSERT_TRUE(each) << each.error().message;
  ASSERT_EQ(each->size(), 3u);  // two of `w`, one of `other`, ordered by workload key
  const bool w_first = w.Key() < other.Key();
  EXPECT_EQ((*each)[w_first ? 0 : 1], cpu[3]);
  EXPECT_EQ((*each)[w_first ? 1 : 2], cpu[1]);
  EXPECT_EQ(db->BestOfEachWorkload("", TargetQuery{"cuda", ""}, 1)->size(), 2u);  // one per cuda target
  EXPECT_TRUE(db->BestOfEachWorkload("conv2d", TargetQuery{"cpu", ""}, 5)->empty());

  auto workloads = db->Workloads();
  ASSERT_TRUE(workloads);
  ASSERT_EQ(workloads->size(), 2u);
  EXPECT_EQ((*workloads)[w_first ? 0 : 1], WorkloadInfo::From(w));
}

TEST(DbQuery, MeasuredTracesIgnoreDriverAndToolkitVersions) {
  auto db = OpenNew("measured.db");
  const auto w = Gemm();
  auto records = DistinctRecords(w, CudaTarget(), 3);
  records.push_back(MakeFailedRecord(w, 400, CudaTarget()));
  ASSERT_TRUE(db->CommitBatch(records));
  TargetInfo newer_driver = CudaTarget();
  newer_driver.driver = "590.1";
  newer_driver.toolkit = "13.1";
  auto hashes = db->MeasuredTraceHashes(w.Key(), newer_driver);
  ASSERT_TRUE(hashes);
  EXPECT_EQ(hashes->size(), 4u);  // failed ones count: measuring them again would fail again
  for (const auto& r : records) EXPECT_TRUE(hashes->count(r.trace_hash));
  EXPECT_TRUE(*db->HasMeasured(w.Key(), newer_driver, records[1].trace_hash));
  EXPECT_FALSE(*db->HasMeasured(w.Key(), CudaTarget("sm_80"), records[1].trace_hash));
  EXPECT_FALSE(*db->HasMeasured(w.Key(), newer_driver, "0123"));
  EXPECT_TRUE(db->MeasuredTraceHashes(w.Key(), CpuTarget())->empty());
}

TEST(DbQuery, StatsPerTarget) {
  auto db = OpenNew("stats.db");
  const auto a = Gemm(), b = Gemm("M=32,N=32,K=32");
  auto records = DistinctRecords(a, CpuTarget(), 3);
  auto more = DistinctRecords(b, CpuTarget(), 2);
  records.insert(records.end(), more.begin(), more.end());
  records.push_back(MakeFailedRecord(a, 77, CpuTarget()));
  records.push_back(MakeRecord(a, 1, CudaTarget(), 0.1));
  ASSERT_TRUE(db->CommitBatch(records));
  ASSERT_TRUE(db->SaveCostModel({"cpu-model", "v1-164", "cpu", {1, 2}, 6, ""}));
  auto st = db->Stats();
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_EQ(st->schema_version, kSchemaVersion);
  EXPECT_EQ(st->workloads, 2);
  EXPECT_EQ(st->records, 7);
  EXPECT_EQ(st->cost_models, 1);
  ASSERT_EQ(st->targets.size(), 2u);
  EXPECT_EQ(st->targets[0].target, CpuTarget());  // ordered by kind: cpu before cuda
  EXPECT_EQ(st->targets[0].workloads, 2);
  EXPECT_EQ(st->targets[0].records, 6);
  EXPECT_EQ(st->targets[0].valid, 5);
  EXPECT_EQ(st->targets[0].invalid, 1);
  EXPECT_EQ(st->targets[1].target, CudaTarget());
  EXPECT_EQ(st->targets[1].records, 1);
}

TEST(DbStore, CostModelsAreSavedReplacedAndLoaded) {
  auto db = OpenNew("models.db");
  EXPECT_FALSE(*db->LoadCostModel("m"));
  std::vector<uint8_t> blob(100000);
  for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE(db->SaveCostModel({"m", "v1-164", "cuda", blob, 42, "2026-01-02T03:04:05Z"}));
  auto m = db->LoadCostModel("m");
  ASSERT_TRUE(m && *m);
  EXPECT_EQ((*m)->blob, blob);
  EXPECT_EQ((*m)->num_records, 42);
  EXPECT_EQ((*m)->created_at, "2026-01-02T03:04:05Z");
  ASSERT_TRUE(db->SaveCostModel({"m", "v2-170", "cuda", {}, 43, ""}));
  m = db->LoadCostModel("m");
  EXPECT_EQ((*m)->feature_version, "v2-170");
  EXPECT_TRUE((*m)->blob.empty());
  EXPECT_FALSE((*m)->created_at.empty());  // stamped when not given
  EXPECT_EQ(db->Stats()->cost_models, 1);
  EXPECT_FALSE(db->SaveCostModel({"", "v1", "cpu", {}, 0, ""}));
}

TEST(DbOpen, ReadOnlyNeedsAnExistingFileAndCreatesNothing) {
  const std::string path = TempPath("missing.db");
  auto db = TuningDatabase::Open(path, OpenMode::kReadOnly);
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message.find(path), std::string::npos);
  EXPECT_FALSE(Exists(path));
  EXPECT_FALSE(TuningDatabase::Open(::testing::TempDir()));  // a directory
}

TEST(DbOpen, ReadOnlyOpenOfAWritableDatabaseReadsItAndWritesNothing) {
  const std::string path = TempPath("ro.db");
  auto records = DistinctRecords(Gemm(), CpuTarget(), 3);
  {
    auto db = TuningDatabase::Open(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE((*db)->CommitBatch(records));
  }
  const std::string before = ReadBytes(path);
  {
    auto db = TuningDatabase::Open(path, OpenMode::kReadOnly);
    ASSERT_TRUE(db) << db.error().message;
    EXPECT_EQ(AllRecords(**db), records);
    EXPECT_EQ(*(*db)->IntegrityCheck(), "ok");
    // Nothing beside it either (so a read-only directory is fine): no writer had it open.
    EXPECT_FALSE(Exists(path + "-wal"));
    EXPECT_FALSE(Exists(path + "-shm"));
  }
  EXPECT_EQ(ReadBytes(path), before);
}

// While a writer has the database open, a read-only open shares its locks and sees its commits.
TEST(DbOpen, ReadOnlyOpenBesideAWriterSeesItsCommits) {
  const std::string path = TempPath("ro-beside-writer.db");
  auto writer = TuningDatabase::Open(path);
  ASSERT_TRUE(writer);
  auto records = DistinctRecords(Gemm(), CpuTarget(), 3);
  ASSERT_TRUE((*writer)->CommitBatch({records[0]}));
  auto reader = TuningDatabase::Open(path, OpenMode::kReadOnly);
  ASSERT_TRUE(reader) << reader.error().message;
  ASSERT_TRUE((*writer)->CommitBatch({records[1], records[2]}));
  EXPECT_EQ(AllRecords(**reader), records);
}

TEST(DbOpen, SpecialFilesAreRefused) {
  for (const OpenMode mode : {OpenMode::kReadWrite, OpenMode::kReadOnly}) {
    auto db = TuningDatabase::Open("/dev/null", mode);
    ASSERT_FALSE(db);
    EXPECT_NE(db.error().message.find("not a regular file"), std::string::npos) << db.error().message;
  }
}

TEST(DbOpen, AnEmptyFileBecomesADatabase) {
  const std::string path = TempPath("empty.db");
  WriteBytes(path, "");
  auto db = TuningDatabase::Open(path);
  ASSERT_TRUE(db) << db.error().message;
  ASSERT_TRUE((*db)->CommitBatch(DistinctRecords(Gemm(), CpuTarget(), 1)));
}

// Every kind of file Open must refuse, in both modes, leaving the bytes as they were.
struct BadFile {
  std::string name;
  std::function<void(const std::string& path)> make;
  std::string expected;  // part of the message
};

void MakeAutotuneDb(const std::string& path, int records) {
  auto db = TuningDatabase::Open(path);
  ASSERT_TRUE(db);
  ASSERT_TRUE((*db)->CommitBatch(DistinctRecords(Gemm(), CpuTarget(), records)));
}

std::vector<BadFile> BadFiles() {
  std::vector<BadFile> files;
  files.push_back({"random",
                   [](const std::string& p) {
                     std::mt19937 rng(7);
                     std::string bytes(8192, '\0');
                     for (char& c : bytes) c = static_cast<char>(rng());
                     WriteBytes(p, bytes);
                   },
                   "not an SQLite database (file is not a database)"});
  files.push_back(
      {"text", [](const std::string& p) { WriteBytes(p, "workload,latency\ngemm,1.0\n"); }, "not an SQLite database"});
  files.push_back({"short", [](const std::string& p) { WriteBytes(p, "SQLite format 3"); }, "not an SQLite database"});
  files.push_back({"header-garbage",
                   [](const std::string& p) {
                     MakeAutotuneDb(p, 5);
                     std::string bytes = ReadBytes(p);
                     for (int i = 0; i < 100; ++i) bytes[i] = static_cast<char>(0xA5 ^ i);
                     WriteBytes(p, bytes);
                   },
                   "not an SQLite database"});
  for (const bool page_aligned : {true, false}) {
    files.push_back({page_aligned ? "truncated-at-page" : "truncated",
                     [page_aligned](const std::string& p) {
                       MakeAutotuneDb(p, 40);
                       std::string bytes = ReadBytes(p);
                       ASSERT_GT(bytes.size(), 8u * 4096);
                       size_t keep = bytes.size() / 2;
                       keep = page_aligned ? keep / 4096 * 4096 : keep + 1234;
                       WriteBytes(p, bytes.substr(0, keep));
                     },
                     "damaged tuning database"});
  }
  files.push_back({"foreign",
                   [](const std::string& p) {
                     auto c = sqlite::Connection::Open(p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
                     ASSERT_TRUE(c);
                     ASSERT_TRUE(
                         c->Exec("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT); "
                                 "INSERT INTO photos (path) VALUES ('a.jpg')"));
                   },
                   "not an autotune tuning database"});
  files.push_back({"foreign-empty-with-id",
                   [](const std::string& p) {
                     auto c = sqlite::Connection::Open(p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
                     ASSERT_TRUE(c);
                     ASSERT_TRUE(c->Exec("PRAGMA application_id = 1234"));
                   },
                   "not an autotune tuning database"});
  files.push_back({"newer",
                   [](const std::string& p) {
                     MakeAutotuneDb(p, 2);
                     auto c = sqlite::Connection::Open(p, SQLITE_OPEN_READWRITE);
                     ASSERT_TRUE(c);
                     ASSERT_TRUE(c->Exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1)));
                   },
                   "written by a newer autotune (schema " + std::to_string(kSchemaVersion + 1) + ", this build knows " +
                       std::to_string(kSchemaVersion) + ")"});
  return files;
}

TEST(DbOpen, FilesThatAreNotUsableAutotuneDatabasesAreRefusedAndLeftUntouched) {
  for (const BadFile& f : BadFiles()) {
    for (const OpenMode mode : {OpenMode::kReadWrite, OpenMode::kReadOnly}) {
      const std::string path = TempPath("bad-" + f.name + ".db");
      f.make(path);
      for (const char* side : {"-wal", "-shm"}) std::remove((path + side).c_str());
      const std::string before = ReadBytes(path);
      ASSERT_FALSE(before.empty()) << f.name;
      auto db = TuningDatabase::Open(path, mode);
      const char* mode_name = mode == OpenMode::kReadOnly ? "read-only" : "read-write";
      ASSERT_FALSE(db) << f.name << " " << mode_name;
      const std::string& msg = db.error().message;
      EXPECT_NE(msg.find(path), std::string::npos) << f.name << ": " << msg;
      EXPECT_NE(msg.find(f.expected), std::string::npos) << f.name << " " << mode_name << ": " << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_TRUE(ReadBytes(path) == before) << f.name << " " << mode_name << ": the file changed";
      EXPECT_FALSE(Exists(path + "-wal") || Exists(path + "-shm")) << f.name << " " << mode_name << ": files beside it";
    }
  }
}

// Damage inside the file (not at its end) may get past Open's cheap checks; then the integrity
// check reports it, and still nothing is written.
TEST(DbOpen, DamagedPageIsFoundByOpenOrByTheIntegrityCheck) {
  const std::string path = TempPath("damaged.db");
  MakeAutotuneDb(path, 40);
  std::string bytes = ReadBytes(path);
  ASSERT_GT(bytes.size(), 8u * 4096);
  for (size_t i = 4 * 4096; i < 5 * 4096; ++i) bytes[i] = static_cast<char>(0xFF);
  WriteBytes(path, bytes);
  for (const OpenMode mode : {OpenMode::kReadOnly, OpenMode::kReadWrite}) {
    auto db = TuningDatabase::Open(path, mode);
    if (db) {
      auto check = (*db)->IntegrityCheck();
      EXPECT_TRUE(!check || *check != "ok");
    } else {
      EXPECT_NE(db.error().message.find("damaged"), std::string::npos) << db.error().message;
    }
    db = Error{};  // closed
    EXPECT_TRUE(ReadBytes(path) == bytes);
  }
}

}  // namespace
}  // namespace autotune::db
