// Shared by the database tests: realistic records (real workloads, real traces from the CPU tiling
// template) and file helpers. Latencies are only test data.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>
#include <vector>

#include "db/database.h"
#include "db/record.h"
#include "db/schema.h"
#include "db/sqlite.h"
#include "search/default_schedule.h"
#include "tir/ops/operator.h"
#include "tir/schedule/trace.h"
#include "tests/db/lookup/lookup_fixture.h"
#include "tir/version.h"
#include "tests/temp_path.h"

namespace autotune::db::testing {

inline TargetInfo CpuTarget() { return {"cpu", "x86_64", "Test CPU", "", "cc (test) 12.2"}; }
inline TargetInfo CudaTarget(const std::string& arch = "sm_90") {
  return {"cuda", arch, "NVIDIA H200", "580.82", "13.0"};
}

inline tir::Workload Gemm(const std::string& shape = "M=64,N=64,K=64", const std::string& epilogue = "") {
  auto w = tir::MakeWorkload("gemm", shape, epilogue);
  EXPECT_TRUE(w) << (w ? "" : w.error().message);
  return std::move(w).value();
}

// A valid record of a random schedule of `w` (its trace is real: RandomSchedule(w, cpu, seed)).
inline TuningRecord MakeRecord(const tir::Workload& w, uint64_t seed, const TargetInfo& target, double median_ms) {
  auto sch = search::RandomSchedule(w, tir::TargetKind::kCpu, seed);
  EXPECT_TRUE(sch) << (sch ? "" : sch.error().message);
  TuningRecord r = MakeRecord(*sch, target, median_ms);
  SetMedian(r, median_ms);
  r.max_rel_error = 1.5e-7;
  r.measured_at = "2026-11-29T09:37:21Z";
  r.info_json = R"({"build_s":0.25,"registers":32})";
  return r;
}

// An invalid one: the candidate failed to build.
inline TuningRecord MakeFailedRecord(const tir::Workload& w, uint64_t seed, const TargetInfo& target) {
  TuningRecord r = MakeRecord(w, seed, target, 1.0);
  r.latencies_ms.clear();
  r.median_ms = 0;
  r.gflops = 0;
  r.correct = false;
  r.max_rel_error.reset();
  r.error_kind = "BUILD_ERROR";
  r.error_message = "error: 'x' undeclared";
  r.info_json = "{}";
  return r;
}

// `n` records with pairwise different traces (random seeds can repeat a trace: those are skipped),
// seeds from `first_seed` on, medians 1.0, 1.1, ...
inline std::vector<TuningRecord> DistinctRecords(const tir::Workload& w, const TargetInfo& target, int n,
                                                 uint64_t first_seed = 1) {
  std::vector<TuningRecord> out;
  std::unordered_set<std::string> seen;
  for (uint64_t seed = first_seed; static_cast<int>(out.size()) < n && seed < first_seed + 100000; ++seed) {
    TuningRecord r = MakeRecord(w, seed, target, 1.0 + 0.1 * static_cast<double>(out.size()));
    if (seen.insert(r.trace_hash).second) out.push_back(std::move(r));
  }
  EXPECT_EQ(static_cast<int>(out.size()), n);
  return out;
}

// A path of this test process only (ctest runs tests in parallel); any old file there is removed.
inline std::string TempPath(const std::string& name) {
  const std::string path = autotune::testing::TestTempPath("autotune_db", name);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
  return path;
}

// A new database in a TempPath.
inline std::unique_ptr<TuningDatabase> OpenNew(const std::string& name) {
  auto db = TuningDatabase::Open(TempPath(name));
  EXPECT_TRUE(db) << (db ? "" : db.error().message);
  return std::move(db).value();
}

// Every record, in insertion order.
inline std::vector<TuningRecord> AllRecords(TuningDatabase& db) {
  std::vector<TuningRecord> out;
  EXPECT_TRUE(db.ForEachRecord([&](const TuningRecord& r) {
    out.push_back(r);
    return true;
  }));
  return out;
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A database as autotune's schema version 1 wrote it (the DDL kept in db/schema.h), holding
// `records`, in the rollback journal mode a plain SQLite file has.
inline void MakeVersion1Database(const std::string& path, const std::vector<TuningRecord>& records) {
  auto conn = sqlite::Connection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  ASSERT_TRUE(conn) << conn.error().message;
  ASSERT_TRUE(conn->Exec(kSchemaV1Sql));
  ASSERT_TRUE(conn->Exec("PRAGMA application_id = " + std::to_string(kApplicationId) + "; PRAGMA user_version = 1"));
  for (const TuningRecord& r : records) {
    std::string shape = "[";
    for (const auto& [name, value] : r.workload.shape) {
      shape += (shape.size() > 1 ? "," : "") + std::string("[\"") + name + "\"," + std::to_string(value) + "]";
    }
    shape += "]";
    auto w = conn->Prepare(
        "INSERT OR IGNORE INTO workloads (key, op, shape_json, epilogue, dtype, layout, flops) VALUES "
        "(?1,?2,?3,?4,?5,?6,?7)");
    ASSERT_TRUE(w);
    w->Bind(1, r.workload.key).Bind(2, r.workload.op).Bind(3, shape).Bind(4, r.workload.epilogue);
    w->Bind(5, r.workload.dtype).Bind(6, r.workload.layout).Bind(7, r.workload.flops);
    ASSERT_TRUE(w->Run());
    auto t =
        conn->Prepare("INSERT OR IGNORE INTO targets (kind, arch, device, driver, toolkit) VALUES (?1,?2,?3,?4,?5)");
    ASSERT_TRUE(t);
    t->Bind(1, r.target.kind).Bind(2, r.target.arch).Bind(3, r.target.device).Bind(4, r.target.driver);
    t->Bind(5, r.target.toolkit);
    ASSERT_TRUE(t->Run());
    std::string lat = "[";
    for (double x : r.latencies_ms) lat += (lat.size() > 1 ? "," : "") + nlohmann::json(x).dump();
    lat += "]";
    auto rec = conn->Prepare(R"sql(
      INSERT INTO records (workload_id, target_id, trace_json, trace_hash, trace_format_version, latencies_json,
                           median_ms, gflops, correct, max_rel_error, error_kind, error_message, measured_at,
                           autotune_version)
      VALUES ((SELECT id FROM workloads WHERE key = ?1),
              (SELECT id FROM targets WHERE kind = ?2 AND arch = ?3 AND device = ?4 AND driver = ?5 AND toolkit = ?6),
              ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18))sql");
    ASSERT_TRUE(rec);
    rec->Bind(1, r.workload.key).Bind(2, r.target.kind).Bind(3, r.target.arch).Bind(4, r.target.device);
    rec->Bind(5, r.target.driver).Bind(6, r.target.toolkit).Bind(7, r.trace_json).Bind(8, r.trace_hash);
    rec->Bind(9, r.trace_format_version).Bind(10, lat).Bind(11, r.median_ms).Bind(12, r.gflops);
    rec->Bind(13, r.correct ? 1 : 0);
    if (r.max_rel_error) {
      rec->Bind(14, *r.max_rel_error);
    } else {
      rec->BindNull(14);
    }
    rec->Bind(15, r.error_kind).Bind(16, r.error_message).Bind(17, r.measured_at).Bind(18, r.autotune_version);
    ASSERT_TRUE(rec->Run());
  }
}

}  // namespace autotune::db::testing
