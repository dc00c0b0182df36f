// Merging databases: de-duplicated by (workload, target, trace), idempotent, from an older schema
// without writing it, and never a database into itself.
#include <gtest/gtest.h>
#include <unistd.h>

#include "db/database.h"
#include "db/merge.h"
#include "tests/db/db_test_util.h"

namespace autotune::db {
namespace {

using namespace autotune::db::testing;

std::unique_ptr<TuningDatabase> OpenAt(const std::string& path) {
  auto db = TuningDatabase::Open(path);
  EXPECT_TRUE(db) << (db ? "" : db.error().message);
  return std::move(db).value();
}

int64_t Records(TuningDatabase& db) { return db.Stats()->records; }

TEST(DbMerge, MergeAddsOnlyNewRecordsAndASecondMergeAddsNothing) {
  const std::string a_path = TempPath("merge-a.db"), b_path = TempPath("merge-b.db");
  const auto w = Gemm();
  const auto traces = DistinctRecords(w, CpuTarget(), 6);
  {
    auto a = OpenAt(a_path);
    ASSERT_TRUE(a->CommitBatch({traces[0], traces[1], traces[2], traces[3]}));
    // The same trace measured on another target is another record.
    TuningRecord on_gpu = traces[0];
    on_gpu.target = CudaTarget();
    ASSERT_TRUE(a->CommitBatch({on_gpu}));
  }
  auto b = OpenAt(b_path);
  // Measured again on B's machine (another latency), same workload, target and trace: a duplicate.
  TuningRecord remeasured = traces[3];
  SetMedian(remeasured, 9.0);
  ASSERT_TRUE(b->CommitBatch({traces[2], remeasured, traces[4], traces[5]}));

  auto counts = MergeDatabase(*b, a_path, /*batch_size=*/2);
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->read, 5);
  EXPECT_EQ(counts->added, 3);  // traces 0 and 1 on the CPU, trace 0 on the GPU
  EXPECT_EQ(counts->duplicates, 2);
  EXPECT_EQ(Records(*b), 7);
  auto best = b->Best(w.Key(), TargetQuery{"cpu", ""}, 0);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->back().median_ms, 9.0);  // B's own measurement stays

  counts = MergeDatabase(*b, a_path);
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->added, 0);
  EXPECT_EQ(counts->duplicates, 5);
  EXPECT_EQ(Records(*b), 7);
  EXPECT_EQ(*b->IntegrityCheck(), "ok");
}

TEST(DbMerge, MergingADatabaseIntoItselfIsRefusedUnderAnyName) {
  const std::string path = TempPath("self.db"), link = TempPath("self-link.db");
  auto db = OpenAt(path);
  ASSERT_TRUE(db->CommitBatch(DistinctRecords(Gemm(), CpuTarget(), 2)));
  ASSERT_EQ(symlink(path.c_str(), link.c_str()), 0);
  for (const std::string& other : {path, link}) {
    auto counts = MergeDatabase(*db, other);
    ASSERT_FALSE(counts) << other;
    EXPECT_NE(counts.error().message.find("into itself"), std::string::npos) << counts.error().message;
  }
  EXPECT_EQ(Records(*db), 2);
  std::remove(link.c_str());
}

TEST(DbMerge, AnOlderSchemaIsMergedWithoutWritingIt) {
  const std::string old_path = TempPath("merge-v1.db"), into_path = TempPath("merge-into.db");
  auto records = DistinctRecords(Gemm(), CpuTarget(), 3);
  for (auto& r : records) r.info_json = "{}";
  MakeVersion1Database(old_path, records);
  const std::string before = ReadBytes(old_path);
  auto into = OpenAt(into_path);
  auto counts = MergeDatabase(*into, old_path);
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->added, 3);
  EXPECT_EQ(ReadBytes(old_path), before);
}

TEST(DbMerge, AnUnusableSourceIsAnError) {
  const std::string text = TempPath("notes.txt");
  WriteBytes(text, "not a database\n");
  auto into = OpenAt(TempPath("merge-err.db"));
  auto counts = MergeDatabase(*into, text);
  ASSERT_FALSE(counts);
  EXPECT_NE(counts.error().message.find("not an SQLite database"), std::string::npos);
  counts = MergeDatabase(*into, TempPath("missing.db"));
  ASSERT_FALSE(counts);
  EXPECT_EQ(ReadBytes(text), "not a database\n");
}

}  // namespace
}  // namespace autotune::db
