// The schema: what a new database holds, and migration from version 1 (built from the version-1
// DDL kept in db/schema.h), in place (read-write) and in memory (read-only, the file untouched).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>

#include "db/database.h"
#include "db/schema.h"
#include "db/sqlite.h"
#include "tests/db/db_test_util.h"

namespace autotune::db {
namespace {

using namespace autotune::db::testing;

sqlite::Connection Raw(const std::string& path) {
  auto c = sqlite::Connection::Open(path, SQLITE_OPEN_READONLY);
  EXPECT_TRUE(c) << (c ? "" : c.error().message);
  return std::move(c).value();
}

// Every table's columns (name, type, not null, default) and every index (its SQL), by name: what a
// migrated database must share with a new one.
std::map<std::string, std::string> SchemaShape(sqlite::Connection& conn) {
  std::map<std::string, std::string> out;
  auto objects = conn.Prepare("SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY name");
  EXPECT_TRUE(objects);
  while (*objects->Step()) {
    const std::string type = objects->ColumnText(0), name = objects->ColumnText(1);
    if (type == "index") {
      out["index " + name] = objects->ColumnText(2);
    } else if (type == "table") {
      auto cols =
          conn.Prepare("SELECT name, type, \"notnull\", coalesce(dflt_value, ''), pk FROM pragma_table_info(?1)");
      EXPECT_TRUE(cols);
      cols->Bind(1, name);
      std::string desc;
      while (*cols->Step()) {
        desc += cols->ColumnText(0) + " " + cols->ColumnText(1) + (cols->ColumnInt(2) ? " NOT NULL" : "") +
                (cols->ColumnText(3).empty() ? "" : " DEFAULT " + cols->ColumnText(3)) +
                (cols->ColumnInt(4) ? " PK" : "") + "; ";
      }
      out["table " + name] = desc;
    }
  }
  return out;
}

std::vector<TuningRecord> SomeRecords() {
  const auto w = Gemm();
  auto records = DistinctRecords(w, CpuTarget(), 3);
  records.push_back(MakeFailedRecord(w, 1000, CpuTarget()));
  for (auto& r : records) r.info_json = "{}";  // version 1 had no info column: "{}" is what migration gives
  return records;
}

TEST(DbSchema, MigrationsAreOneStepEachFromVersionOne) {
  int expected = 1;
  for (const Migration& m : Migrations()) EXPECT_EQ(m.from_version, expected++);
  EXPECT_EQ(expected, kSchemaVersion);
  EXPECT_EQ(TablesOf(1).size(), 3u);
  EXPECT_EQ(TablesOf(kSchemaVersion).size(), 4u);
}

TEST(DbSchema, NewDatabaseHasTablesIndexesVersionAndApplicationId) {
  const std::string path = TempPath("new.db");
  {
    auto db = TuningDatabase::Open(path);
    ASSERT_TRUE(db) << db.error().message;
    EXPECT_EQ((*db)->schema_version(), kSchemaVersion);
    EXPECT_EQ((*db)->file_schema_version(), kSchemaVersion);
    EXPECT_FALSE((*db)->read_only());
  }
  auto conn = Raw(path);
  EXPECT_EQ(*conn.QueryInt("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(*conn.QueryInt("PRAGMA application_id"), kApplicationId);
  EXPECT_EQ(*conn.QueryText("PRAGMA journal_mode"), "wal");
  const auto shape = SchemaShape(conn);
  for (const char* table : {"workloads", "targets", "records", "cost_models"}) {
    EXPECT_TRUE(shape.count(std::string("table ") + table)) << table;
  }
  EXPECT_NE(shape.at("table records").find("info_json TEXT NOT NULL DEFAULT '{}'"), std::string::npos);
  EXPECT_NE(shape.at("table records").find("max_rel_error REAL; "), std::string::npos);  // nullable
  ASSERT_TRUE(shape.count("index records_by_trace"));
  EXPECT_NE(shape.at("index records_by_trace").find("CREATE UNIQUE INDEX"), std::string::npos);
  ASSERT_TRUE(shape.count("index records_best_valid"));
  EXPECT_NE(shape.at("index records_best_valid").find("WHERE error_kind = 'NONE' AND correct = 1"), std::string::npos);
}

TEST(DbSchema, Version1IsMigratedInPlaceWithItsRowsIntact) {
  const std::string v1 = TempPath("v1.db"), fresh = TempPath("fresh.db");
  const auto records = SomeRecords();
  MakeVersion1Database(v1, records);
  {
    auto conn = Raw(v1);
    EXPECT_EQ(*conn.QueryInt("PRAGMA user_version"), 1);
  }
  auto db = TuningDatabase::Open(v1);
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_EQ((*db)->file_schema_version(), kSchemaVersion);
  EXPECT_EQ(AllRecords(**db), records);
  // The migrated database is usable as a new one: records with details, cost models.
  auto more = DistinctRecords(Gemm(), CpuTarget(), 5);
  auto n = (*db)->CommitBatch(more);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 2);  // the first three are the version-1 records' traces
  ASSERT_TRUE((*db)->SaveCostModel({"m", "v1-164", "cpu", {1, 2, 3}, 10, ""}));
  db->reset();

  ASSERT_TRUE(TuningDatabase::Open(fresh));
  auto migrated = Raw(v1), created = Raw(fresh);
  EXPECT_EQ(*migrated.QueryInt("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(*migrated.QueryText("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(SchemaShape(migrated), SchemaShape(created));
}

TEST(DbSchema, Version1OpenedReadOnlyIsMigratedInMemoryAndTheFileIsUntouched) {
  const std::string v1 = TempPath("v1ro.db");
  const auto records = SomeRecords();
  MakeVersion1Database(v1, records);
  const std::string before = ReadBytes(v1);
  {
    auto db = TuningDatabase::Open(v1, OpenMode::kReadOnly);
    ASSERT_TRUE(db) << db.error().message;
    EXPECT_TRUE((*db)->read_only());
    EXPECT_EQ((*db)->schema_version(), kSchemaVersion);
    EXPECT_EQ((*db)->file_schema_version(), 1);
    EXPECT_EQ(AllRecords(**db), records);
    auto stats = (*db)->Stats();
    ASSERT_TRUE(stats) << stats.error().message;
    EXPECT_EQ(stats->records, 4);
    EXPECT_EQ(stats->cost_models, 0);
    auto best = (*db)->Best(records[0].workload.key, TargetQuery{"cpu", ""}, 10);
    ASSERT_TRUE(best);
    EXPECT_EQ(best->size(), 3u);
    auto write = (*db)->CommitBatch(DistinctRecords(Gemm("M=32,N=32,K=32"), CpuTarget(), 1));
    ASSERT_FALSE(write);
    EXPECT_NE(write.error().message.find("read-only"), std::string::npos);
    EXPECT_FALSE((*db)->SaveCostModel({"m", "v1", "cpu", {}, 0, ""}));
  }
  EXPECT_EQ(ReadBytes(v1), before);
  auto conn = Raw(v1);
  EXPECT_EQ(*conn.QueryInt("PRAGMA user_version"), 1);
}

}  // namespace
}  // namespace autotune::db
