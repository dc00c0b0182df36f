// The tuning database: every measurement autotune makes, in one SQLite file (schema: db/schema.h).
//
// Behaviour under real use:
//  - WAL journal, a busy timeout, and one IMMEDIATE transaction per CommitBatch: several processes
//    may write one file at once and nothing is lost; a process killed mid-job leaves every batch it
//    committed, and a file that passes `PRAGMA integrity_check`.
//  - Open never changes a file it does not recognize: a file that is not SQLite, or an SQLite
//    database of another application, or one written by a newer autotune, is an error naming the
//    path and the reason, and the file is left byte-for-byte untouched.
//  - Read-only opens never write: an older schema is migrated in an in-memory copy.
// A TuningDatabase is safe to use from several threads (calls are serialized).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "db/record.h"
#include "db/target.h"
#include "support/result.h"

namespace autotune::db {

enum class OpenMode {
  kReadWrite,  // creates the file if missing, creates or migrates the schema
  kReadOnly,   // the file must exist; nothing is ever written to it
};

struct TargetStats {
  TargetInfo target;
  int64_t workloads = 0;  // workloads with at least one record on this target
  int64_t records = 0;
  int64_t valid = 0;    // ran, correct and timed
  int64_t invalid = 0;  // any error kind, or a wrong answer
};

struct DatabaseStats {
  int schema_version = 0;
  int64_t workloads = 0;
  int64_t records = 0;
  int64_t cost_models = 0;
  std::vector<TargetStats> targets;  // ordered by kind, arch, device, driver, toolkit
};

// A trained cost model (its bytes are the model library's own format), with the feature version it
// was trained with: a model is only usable with the same feature version.
struct StoredCostModel {
  std::string name;             // unique; saving under an existing name replaces it
  std::string feature_version;  // e.g. "v1-164"
  std::string target_kind;      // "cpu" / "cuda"
  std::vector<uint8_t> blob;
  int64_t num_records = 0;  // records it was trained on
  std::string created_at;   // ISO-8601 UTC
};

class TuningDatabase {
 public:
  static Result<std::unique_ptr<TuningDatabase>> Open(const std::string& path, OpenMode mode = OpenMode::kReadWrite);
  ~TuningDatabase();
  TuningDatabase(const TuningDatabase&) = delete;
  TuningDatabase& operator=(const TuningDatabase&) = delete;

  const std::string& path() const;
  int schema_version() const;  // after migration: always kSchemaVersion
  // The version the file itself holds: below schema_version() only when an older file was opened
  // read-only (and migrated in memory).
  int file_schema_version() const;
  bool read_only() const;

  // Stores a measured batch in one transaction. A record whose (workload, target, trace hash) is
  // already stored is skipped; returns how many were inserted. Workload and target rows are made on
  // first use. Fails (storing nothing) on a read-only database or a malformed record (empty key or
  // trace hash, unknown error kind text is accepted as-is).
  Result<int> CommitBatch(const std::vector<TuningRecord>& records);

  // Replaces the measurement of the stored record with the same (workload, target, trace hash) by
  // `record`'s (latencies, median, GFLOP/s, correctness, error, time, version, info): a re-measured
  // record. False, changing nothing, when no such record is stored.
  Result<bool> ReplaceMeasurement(const TuningRecord& record);

  // The trace hashes measured for a workload on targets with the same kind, arch and device as
  // `target` (any driver/toolkit): the search loads this once per task and never measures them again.
  Result<std::unordered_set<std::string>> MeasuredTraceHashes(const std::string& workload_key, const TargetInfo& target);
  Result<bool> HasMeasured(const std::string& workload_key, const TargetInfo& target, const std::string& trace_hash);

  // The valid records of a workload on targets matching `query`, fastest (lowest median) first;
  // at most `limit` (<= 0: all).
  Result<std::vector<TuningRecord>> Best(const std::string& workload_key, const TargetQuery& query, int limit);
  // For every workload of operator `op` ("" = all) with a valid record on a target matching `query`:
  // its `per_workload` fastest valid records per target. What the lookup library loads at open.
  Result<std::vector<TuningRecord>> BestOfEachWorkload(const std::string& op, const TargetQuery& query,
                                                       int per_workload);
  // The workloads stored (key, op, shape, ...), ordered by op then key.
  Result<std::vector<WorkloadInfo>> Workloads();
  // Every record in insertion order; `fn` returns false to stop early. The database stays locked
  // while it runs: `fn` may read this database again but should not write it.
  Result<void> ForEachRecord(const std::function<bool(const TuningRecord&)>& fn);
  Result<DatabaseStats> Stats();
  // How many records a workload has on targets matching `query` (nullopt: on any target), and how
  // many of them are valid.
  struct RecordCounts {
    int64_t records = 0;
    int64_t valid = 0;
    int64_t invalid() const { return records - valid; }
  };
  Result<RecordCounts> CountRecords(const std::string& workload_key, const std::optional<TargetQuery>& query);

  Result<void> SaveCostModel(const StoredCostModel& model);
  Result<std::optional<StoredCostModel>> LoadCostModel(const std::string& name);

  // `PRAGMA integrity_check`: "ok" or SQLite's list of problems.
  Result<std::string> IntegrityCheck();

 private:
  struct Impl;
  explicit TuningDatabase(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace autotune::db
