// The tuning database's schema: its version, the marks that identify an autotune database, the DDL,
// and the migrations from every older version. A file is ours when `PRAGMA application_id` is
// kApplicationId; `PRAGMA user_version` is its schema version.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "db/sqlite.h"
#include "support/result.h"

namespace autotune::db {

// Bump with a new migration below, and say what changed.
// 1: workloads, targets, records.
// 2: cost_models table; records.info_json (details that are not columns).
inline constexpr int kSchemaVersion = 2;

// "ATDB": set on every database we create; an SQLite file without it is another application's.
inline constexpr int kApplicationId = 0x41544442;

// The first schema, exactly as version 1 created it; never edit it. A new database is created with it
// and then migrated to kSchemaVersion, like an old file; a test builds a version-1 file with it.
extern const char* const kSchemaV1Sql;

// Upgrades a database from `from_version` to from_version + 1.
struct Migration {
  int from_version;
  const char* sql;
};
// Ordered, one per version step, starting at version 1.
std::span<const Migration> Migrations();

// The tables a database of `version` must have.
std::vector<std::string> TablesOf(int version);

// Both run inside the caller's transaction and set user_version (and application_id) with the DDL,
// so a schema change commits or rolls back as one.
// Creates the current schema in an empty database (version 1, then the migrations).
Result<void> CreateSchema(sqlite::Connection& conn);
// Applies the migrations from `from_version` (1 <= from_version <= kSchemaVersion) up to kSchemaVersion.
Result<void> MigrateSchema(sqlite::Connection& conn, int from_version);

}  // namespace autotune::db
