#include "db/schema.h"

#include <fmt/format.h>

namespace autotune::db {

// Notes on the columns:
//  - workloads.key is tir::Workload::Key() (SHA-256 of the key text); the other columns are what it
//    was made from. shape_json is an array of [name, value] pairs: the operator's canonical order,
//    which a JSON object would not keep.
//  - A target is all five columns: records measured under another driver or toolkit stay apart.
//  - records.latencies_json is a JSON array of every timed repeat (ms); max_rel_error is NULL when
//    not checked; error_kind is measure's name ("NONE", "BUILD_ERROR", ...).
// The indexes answer the two questions the search asks: "has this trace been measured on this
// target" (unique: a trace is stored once per workload and target) and "the best valid records of a
// workload on a target" (partial: only valid rows, ordered by median).
const char* const kSchemaV1Sql = R"sql(
CREATE TABLE workloads (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  op TEXT NOT NULL,
  shape_json TEXT NOT NULL,
  epilogue TEXT NOT NULL,
  dtype TEXT NOT NULL,
  layout TEXT NOT NULL,
  flops REAL NOT NULL
);
CREATE TABLE targets (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  arch TEXT NOT NULL,
  device TEXT NOT NULL,
  driver TEXT NOT NULL,
  toolkit TEXT NOT NULL,
  UNIQUE (kind, arch, device, driver, toolkit)
);
CREATE TABLE records (
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  trace_json TEXT NOT NULL,
  trace_hash TEXT NOT NULL,
  trace_format_version INTEGER NOT NULL,
  latencies_json TEXT NOT NULL,
  median_ms REAL NOT NULL,
  gflops REAL NOT NULL,
  correct INTEGER NOT NULL,
  max_rel_error REAL,
  error_kind TEXT NOT NULL,
  error_message TEXT NOT NULL,
  measured_at TEXT NOT NULL,
  autotune_version TEXT NOT NULL
);
CREATE UNIQUE INDEX records_by_trace ON records (workload_id, target_id, trace_hash);
CREATE INDEX records_best_valid ON records (workload_id, target_id, median_ms)
  WHERE error_kind = 'NONE' AND correct = 1;
)sql";

namespace {

// A new database is made by the same steps as an old one is upgraded by: version 1, then every
// migration, so the two cannot drift apart.
constexpr Migration kMigrations[] = {
    // 1 -> 2: trained cost models live with the records they were trained on; per-record details
    // (registers, spills, build and run seconds) get a JSON column instead of one column each.
    {1, R"sql(
CREATE TABLE cost_models (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  feature_version TEXT NOT NULL,
  target_kind TEXT NOT NULL,
  blob BLOB NOT NULL,
  num_records INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
ALTER TABLE records ADD COLUMN info_json TEXT NOT NULL DEFAULT '{}';
)sql"},
};
static_assert(std::size(kMigrations) == kSchemaVersion - 1, "one migration per schema version step");

Result<void> SetVersion(sqlite::Connection& conn, int version) {
  return conn.Exec(fmt::format("PRAGMA user_version = {}", version));
}

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

std::vector<std::string> TablesOf(int version) {
  std::vector<std::string> tables;
  if (version >= 1) tables = {"workloads", "targets", "records"};
  if (version >= 2) tables.push_back("cost_models");
  return tables;
}

Result<void> CreateSchema(sqlite::Connection& conn) {
  if (auto r = conn.Exec(kSchemaV1Sql); !r) return MakeError("cannot create the schema: " + r.error().message);
  if (auto r = conn.Exec(fmt::format("PRAGMA application_id = {}", kApplicationId)); !r) return r;
  return MigrateSchema(conn, 1);
}

Result<void> MigrateSchema(sqlite::Connection& conn, int from_version) {
  if (from_version < 1 || from_version > kSchemaVersion) {
    return MakeError(fmt::format("no migration from schema version {}", from_version));
  }
  for (const Migration& m : kMigrations) {
    if (m.from_version < from_version) continue;
    if (auto r = conn.Exec(m.sql); !r) {
      return MakeError(
          fmt::format("migrating schema {} to {}: {}", m.from_version, m.from_version + 1, r.error().message));
    }
  }
  return SetVersion(conn, kSchemaVersion);
}

}  // namespace autotune::db
