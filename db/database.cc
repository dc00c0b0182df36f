#include "db/database.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "db/record_check.h"
#include "db/schema.h"
#include "db/sqlite.h"

namespace autotune::db {

using nlohmann::json;

struct TuningDatabase::Impl {
  std::string path;
  OpenMode mode = OpenMode::kReadWrite;
  sqlite::Connection conn;  // the file, or its in-memory copy (a read-only open of an older schema)
  int file_schema_version = 0;
  // Recursive: ForEachRecord's callback may read the database again.
  std::recursive_mutex mu;
};

namespace {

constexpr int kBusyTimeoutMs = 30000;

// What an open found in the file before anything was changed.
struct FileState {
  int schema_version = 0;  // 0: an empty database, to be initialized
};

// Why SQLite could not read a file, in the words a user needs.
Error Unreadable(const std::string& path, const sqlite::Connection& conn, const Error& e) {
  switch (conn.ErrorCode()) {
    case SQLITE_NOTADB:
      return MakeError(fmt::format("{}: not an SQLite database ({})", path, e.message));
    case SQLITE_CORRUPT:
      return MakeError(fmt::format("{}: damaged tuning database ({})", path, e.message));
    default:
      return MakeError(fmt::format("{}: cannot read the database ({})", path, e.message));
  }
}

// Decides whether the file is ours, reading only. Every statement here is a read, so a file that
// fails any check is left exactly as it was.
Result<FileState> Inspect(const std::string& path, sqlite::Connection& conn) {
  // One read transaction: every answer comes from one snapshot, even while another process is
  // creating the schema (separate reads could see its application_id unset but its tables made).
  if (auto r = conn.Exec("BEGIN"); !r) return Unreadable(path, conn, r.error());
  struct EndRead {
    sqlite::Connection& conn;
    ~EndRead() { (void)conn.Exec("ROLLBACK"); }  // nothing was written: ends the read
  } end_read{conn};
  auto app = conn.QueryInt("PRAGMA application_id");
  if (!app) return Unreadable(path, conn, app.error());
  auto version = conn.QueryInt("PRAGMA user_version");
  if (!version) return Unreadable(path, conn, version.error());
  auto tables = conn.QueryInt("SELECT count(*) FROM sqlite_master");
  if (!tables) return Unreadable(path, conn, tables.error());

  if (*app != kApplicationId) {
    // An empty database (a new file, or a zero-length one) becomes ours; anything else is not.
    if (*app == 0 && *version == 0 && *tables == 0) return FileState{0};
    return MakeError(
        fmt::format("{}: not an autotune tuning database (an SQLite database with application_id {}, "
                    "{} schema objects)",
                    path, *app, *tables));
  }
  if (*version > kSchemaVersion) {
    return MakeError(fmt::format("{}: written by a newer autotune (schema {}, this build knows {})", path, *version,
                                 kSchemaVersion));
  }
  if (*version < 1) return MakeError(fmt::format("{}: damaged tuning database (schema version {})", path, *version));
  for (const std::string& table : TablesOf(static_cast<int>(*version))) {
    auto stmt = conn.Prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
    if (!stmt) return Unreadable(path, conn, stmt.error());
    stmt->Bind(1, table);
    auto row = stmt->Step();
    if (!row) return Unreadable(path, conn, row.error());
    if (stmt->ColumnInt(0) != 1) {
      return MakeError(
          fmt::format("{}: damaged tuning database (schema {} without table '{}')", path, *version, table));
    }
    // The last row of each table: a cheap read (one root-to-leaf path) that finds most damage,
    // such as a file cut short, before anything is written.
    if (auto last = conn.QueryInt("SELECT max(rowid) FROM " + table); !last)
      return Unreadable(path, conn, last.error());
  }
  return FileState{static_cast<int>(*version)};
}

// A read-only look that writes nothing beside the file. Without a -wal file no writer has the
// database open (the last one to close removes it) and every commit is in the file itself, so it is
// read as immutable: no -shm/-wal is created, and a read-only directory is fine. With one, a writer
// may be at work: SQLite's ordinary read-only mode shares its locks.
Result<sqlite::Connection> OpenWithoutWriting(const std::string& path) {
  struct stat st {};
  const bool writer_may_be_active = ::stat((path + "-wal").c_str(), &st) == 0 || ::stat((path + "-journal").c_str(), &st) == 0;
  return writer_may_be_active ? sqlite::Connection::Open(path, SQLITE_OPEN_READONLY)
                              : sqlite::Connection::OpenImmutable(path);
}

Result<sqlite::Connection> OpenInspected(const std::string& path, int flags, FileState* state) {
  auto conn = flags == SQLITE_OPEN_READONLY ? OpenWithoutWriting(path) : sqlite::Connection::Open(path, flags);
  if (!conn) return MakeError(fmt::format("{}: cannot open ({})", path, conn.error().message));
  conn->SetBusyTimeout(kBusyTimeoutMs);
  auto s = Inspect(path, *conn);
  if (!s) return s.error();
  *state = *s;
  return conn;
}

// A PRAGMA that changes a setting, retried while the database is locked. Switching to WAL needs
// the file to itself, and when two processes both want that SQLite answers SQLITE_BUSY at once
// instead of asking the busy handler (which would deadlock): so wait here, up to the busy timeout.
Result<std::string> Setting(sqlite::Connection& conn, const std::string& sql) {
  constexpr int kSleepMs = 20;
  for (int waited = 0;; waited += kSleepMs) {
    auto r = conn.QueryText(sql);
    if (r || (conn.ErrorCode() != SQLITE_BUSY && conn.ErrorCode() != SQLITE_LOCKED) || waited >= kBusyTimeoutMs) {
      return r;
    }
    sqlite3_sleep(kSleepMs);
  }
}

// Creates or migrates the schema in one transaction. The version is read again under the write
// lock: another process may have done the work since this one looked.
Result<void> BringSchemaUpToDate(sqlite::Connection& conn) {
  auto tx = sqlite::Transaction::Begin(conn);
  if (!tx) return tx.error();
  auto version = conn.QueryInt("PRAGMA user_version");
  if (!version) return version.error();
  if (*version == kSchemaVersion) return {};
  if (*version > kSchemaVersion) {
    return MakeError(
        fmt::format("written by a newer autotune (schema {}, this build knows {})", *version, kSchemaVersion));
  }
  auto r = *version == 0 ? CreateSchema(conn) : MigrateSchema(conn, static_cast<int>(*version));
  if (!r) return r;
  return tx->Commit();
}

// ---- Rows ⇄ records -------------------------------------------------------------------------------

std::string ShapeToJson(const tir::ShapeParams& shape) {
  json j = json::array();
  for (const auto& [name, value] : shape) j.push_back(json::array({name, value}));
  return j.dump();
}

std::optional<tir::ShapeParams> ShapeFromJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return std::nullopt;
  tir::ShapeParams shape;
  for (const auto& p : j) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_number_integer()) return std::nullopt;
    shape.emplace_back(p[0].get<std::string>(), p[1].get<int64_t>());
  }
  return shape;
}

std::string LatenciesToJson(const std::vector<double>& latencies) { return json(latencies).dump(); }

std::optional<std::vector<double>> LatenciesFromJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return std::nullopt;
  std::vector<double> out;
  for (const auto& x : j) {
    if (!x.is_number()) return std::nullopt;
    out.push_back(x.get<double>());
  }
  return out;
}

// Every record query selects these columns, in this order (ReadRecord reads them).
constexpr const char* kRecordColumns = R"sql(
  SELECT r.id, w.key, w.op, w.shape_json, w.epilogue, w.dtype, w.layout, w.flops,
         t.kind, t.arch, t.device, t.driver, t.toolkit,
         r.trace_json, r.trace_hash, r.trace_format_version, r.latencies_json, r.median_ms, r.gflops,
         r.correct, r.max_rel_error, r.error_kind, r.error_message, r.measured_at, r.autotune_version, r.info_json
)sql";
constexpr const char* kRecordJoins = R"sql(
  JOIN workloads w ON w.id = r.workload_id
  JOIN targets t ON t.id = r.target_id
)sql";

Result<WorkloadInfo> ReadWorkload(const sqlite::Statement& s, int first) {
  WorkloadInfo w;
  w.key = s.ColumnText(first);
  w.op = s.ColumnText(first + 1);
  auto shape = ShapeFromJson(s.ColumnText(first + 2));
  if (!shape) return MakeError(fmt::format("workload {}: malformed shape_json", w.key));
  w.shape = std::move(*shape);
  w.epilogue = s.ColumnText(first + 3);
  w.dtype = s.ColumnText(first + 4);
  w.layout = s.ColumnText(first + 5);
  w.flops = s.ColumnDouble(first + 6);
  return w;
}

Result<TuningRecord> ReadRecord(const sqlite::Statement& s) {
  TuningRecord r;
  const int64_t id = s.ColumnInt(0);
  auto w = ReadWorkload(s, 1);
  if (!w) return MakeError(fmt::format("record {}: {}", id, w.error().message));
  r.workload = std::move(*w);
  r.target = TargetInfo{s.ColumnText(8), s.ColumnText(9), s.ColumnText(10), s.ColumnText(11), s.ColumnText(12)};
  r.trace_json = s.ColumnText(13);
  r.trace_hash = s.ColumnText(14);
  r.trace_format_version = static_cast<int>(s.ColumnInt(15));
  auto lat = LatenciesFromJson(s.ColumnText(16));
  if (!lat) return MakeError(fmt::format("record {}: malformed latencies_json", id));
  r.latencies_ms = std::move(*lat);
  r.median_ms = s.ColumnDouble(17);
  r.gflops = s.ColumnDouble(18);
  r.correct = s.ColumnInt(19) != 0;
  if (!s.ColumnIsNull(20)) r.max_rel_error = s.ColumnDouble(20);
  r.error_kind = s.ColumnText(21);
  r.error_message = s.ColumnText(22);
  r.measured_at = s.ColumnText(23);
  r.autotune_version = s.ColumnText(24);
  r.info_json = s.ColumnText(25);
  return r;
}

// Runs a record query to the end.
Result<std::vector<TuningRecord>> ReadRecords(sqlite::Statement& stmt) {
  std::vector<TuningRecord> out;
  while (true) {
    auto row = stmt.Step();
    if (!row) return row.error();
    if (!*row) return out;
    auto r = ReadRecord(stmt);
    if (!r) return r.error();
    out.push_back(std::move(*r));
  }
}

// Best-record answers leave out records whose numbers contradict themselves (a file edited by hand, or
// written by a faulty tool), so no caller ranks them.
Result<std::vector<TuningRecord>> BelievableOnly(Result<std::vector<TuningRecord>> records) {
  if (records) std::erase_if(*records, [](const TuningRecord& r) { return !CheckRecordNumbers(r); });
  return records;
}

// What CommitBatch refuses, before it starts the transaction.
Result<void> CheckRecord(const TuningRecord& r, size_t index) {
  auto bad = [&](const std::string& why) {
    return MakeError(fmt::format("record {} of the batch: {}", index + 1, why));
  };
  if (r.workload.key.empty()) return bad("empty workload key");
  if (r.trace_hash.empty()) return bad("empty trace hash");
  if (r.target.kind.empty()) return bad("empty target kind");
  // SQLite stores NaN as NULL, and JSON has no infinities: a non-finite number could not round-trip.
  bool finite = std::isfinite(r.median_ms) && std::isfinite(r.gflops) && std::isfinite(r.workload.flops);
  for (double x : r.latencies_ms) finite &= std::isfinite(x);
  if (r.max_rel_error) finite &= std::isfinite(*r.max_rel_error);
  if (!finite) return bad("a number is not finite");
  if (!json::parse(r.info_json, nullptr, false).is_object()) return bad("info_json is not a JSON object");
  return {};
}

std::string TargetKeyOf(const TargetInfo& t) {
  return t.kind + '\x1f' + t.arch + '\x1f' + t.device + '\x1f' + t.driver + '\x1f' + t.toolkit;
}

}  // namespace

// ---- Open -----------------------------------------------------------------------------------------

TuningDatabase::TuningDatabase(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TuningDatabase::~TuningDatabase() = default;

Result<std::unique_ptr<TuningDatabase>> TuningDatabase::Open(const std::string& path, OpenMode mode) {
  struct stat st {};
  bool exists = true;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT || mode == OpenMode::kReadOnly) {
      return MakeError(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
    }
    exists = false;
  } else if (S_ISDIR(st.st_mode)) {
    return MakeError(fmt::format("{}: cannot open (is a directory)", path));
  } else if (!S_ISREG(st.st_mode)) {
    // SQLite would wait forever on a FIFO and read a device as a database.
    return MakeError(fmt::format("{}: cannot open (not a regular file)", path));
  }

  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->mode = mode;
  FileState state;
  // An existing file is first looked at through a read-only connection: a read-write one could
  // still write a file that is not ours when it closes (checkpointing a leftover WAL of another
  // application's database).
  if (exists) {
    auto ro = OpenInspected(path, SQLITE_OPEN_READONLY, &state);
    if (!ro) return ro.error();
    if (mode == OpenMode::kReadOnly) impl->conn = std::move(*ro);
  }

  if (mode == OpenMode::kReadWrite) {
    // Looked at again: another process may have created or migrated the file meanwhile.
    auto rw = OpenInspected(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &state);
    if (!rw) return rw.error();
    impl->conn = std::move(*rw);
    auto& conn = impl->conn;
    // WAL: readers never block the writer and a commit is one append; NORMAL synchronous is
    // durable against a killed process (only a power loss may lose the last commits).
    auto journal = Setting(conn, "PRAGMA journal_mode = WAL");
    if (!journal) return MakeError(fmt::format("{}: cannot switch to WAL ({})", path, journal.error().message));
    if (*journal != "wal")
      return MakeError(fmt::format("{}: cannot switch to WAL (journal mode stays '{}')", path, *journal));
    for (const char* pragma : {"PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON"}) {
      if (auto r = conn.Exec(pragma); !r) return MakeError(fmt::format("{}: {}", path, r.error().message));
    }
    impl->file_schema_version = state.schema_version;
    if (state.schema_version < kSchemaVersion) {
      if (auto r = BringSchemaUpToDate(conn); !r) {
        return MakeError(fmt::format("{}: cannot {} the schema: {}", path,
                                     state.schema_version == 0 ? "create" : "migrate", r.error().message));
      }
      impl->file_schema_version = kSchemaVersion;
    }
  } else {
    impl->file_schema_version = state.schema_version;
    if (state.schema_version < kSchemaVersion) {
      // Migrated in a private in-memory copy: the file keeps its bytes and its old schema.
      auto mem = impl->conn.CopyToMemory();
      if (!mem) return MakeError(fmt::format("{}: {}", path, mem.error().message));
      impl->conn = std::move(*mem);
      if (auto r = BringSchemaUpToDate(impl->conn); !r) {
        return MakeError(fmt::format("{}: cannot migrate the schema in memory: {}", path, r.error().message));
      }
    }
    // Belt and braces: this connection refuses every write.
    if (auto r = impl->conn.Exec("PRAGMA query_only = 1"); !r)
      return MakeError(fmt::format("{}: {}", path, r.error().message));
  }
  return std::unique_ptr<TuningDatabase>(new TuningDatabase(std::move(impl)));
}

const std::string& TuningDatabase::path() const { return impl_->path; }
int TuningDatabase::schema_version() const { return kSchemaVersion; }
int TuningDatabase::file_schema_version() const { return impl_->file_schema_version; }
bool TuningDatabase::read_only() const { return impl_->mode == OpenMode::kReadOnly; }

// ---- Writing --------------------------------------------------------------------------------------

namespace {

// Binds a record's measurement (latencies, median, GFLOP/s, correct, max rel. error, error kind and
// message, time, version, info) to the ten parameters from `first` on, in that order.
void BindMeasurement(sqlite::Statement& s, const TuningRecord& r, int first) {
  s.Bind(first, LatenciesToJson(r.latencies_ms)).Bind(first + 1, r.median_ms).Bind(first + 2, r.gflops);
  s.Bind(first + 3, r.correct ? 1 : 0);
  if (r.max_rel_error) {
    s.Bind(first + 4, *r.max_rel_error);
  } else {
    s.BindNull(first + 4);
  }
  s.Bind(first + 5, r.error_kind).Bind(first + 6, r.error_message).Bind(first + 7, r.measured_at);
  s.Bind(first + 8, r.autotune_version).Bind(first + 9, r.info_json);
}

}  // namespace

Result<int> TuningDatabase::CommitBatch(const std::vector<TuningRecord>& records) {
  std::lock_guard lock(impl_->mu);
  if (read_only()) return MakeError(fmt::format("{}: opened read-only", impl_->path));
  for (size_t i = 0; i < records.size(); ++i) {
    if (auto r = CheckRecord(records[i], i); !r) return r.error();
  }
  if (records.empty()) return 0;
  auto& conn = impl_->conn;
  auto fail = [&](const Error& e) { return MakeError(fmt::format("{}: storing a batch: {}", impl_->path, e.message)); };

  auto tx = sqlite::Transaction::Begin(conn);
  if (!tx) return fail(tx.error());
  // Workloads and targets are shared rows: inserted on first use, then looked up by their key.
  auto insert_workload = conn.Prepare(
      "INSERT INTO workloads (key, op, shape_json, epilogue, dtype, layout, flops) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
      "ON CONFLICT (key) DO NOTHING");
  auto select_workload = conn.Prepare("SELECT id FROM workloads WHERE key = ?1");
  auto insert_target = conn.Prepare(
      "INSERT INTO targets (kind, arch, device, driver, toolkit) VALUES (?1, ?2, ?3, ?4, ?5) "
      "ON CONFLICT (kind, arch, device, driver, toolkit) DO NOTHING");
  auto select_target = conn.Prepare(
      "SELECT id FROM targets WHERE kind = ?1 AND arch = ?2 AND device = ?3 AND driver = ?4 AND toolkit = ?5");
  // INSERT OR IGNORE restricted to the one constraint that means "already measured": any other
  // violation is still an error.
  auto insert_record = conn.Prepare(R"sql(
    INSERT INTO records (workload_id, target_id, trace_json, trace_hash, trace_format_version, latencies_json,
                         median_ms, gflops, correct, max_rel_error, error_kind, error_message, measured_at,
                         autotune_version, info_json)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
    ON CONFLICT (workload_id, target_id, trace_hash) DO NOTHING)sql");
  for (auto* s : {&insert_workload, &select_workload, &insert_target, &select_target, &insert_record}) {
    if (!*s) return fail(s->error());
  }

  std::map<std::string, int64_t> workload_ids, target_ids;
  auto id_of = [](sqlite::Statement& insert, sqlite::Statement& select) -> Result<int64_t> {
    if (auto r = insert.Run(); !r) return r.error();
    auto row = select.Step();
    if (!row) return row.error();
    if (!*row) return MakeError("a row just inserted is missing");
    return select.ColumnInt(0);
  };
  int inserted = 0;
  for (const TuningRecord& r : records) {
    auto wit = workload_ids.find(r.workload.key);
    if (wit == workload_ids.end()) {
      const WorkloadInfo& w = r.workload;
      insert_workload->Reset();
      select_workload->Reset();
      insert_workload->Bind(1, w.key).Bind(2, w.op).Bind(3, ShapeToJson(w.shape)).Bind(4, w.epilogue);
      insert_workload->Bind(5, w.dtype).Bind(6, w.layout).Bind(7, w.flops);
      select_workload->Bind(1, w.key);
      auto id = id_of(*insert_workload, *select_workload);
      if (!id) return fail(id.error());
      wit = workload_ids.emplace(w.key, *id).first;
    }
    const std::string tkey = TargetKeyOf(r.target);
    auto tit = target_ids.find(tkey);
    if (tit == target_ids.end()) {
      const TargetInfo& t = r.target;
      insert_target->Reset();
      select_target->Reset();
      insert_target->Bind(1, t.kind).Bind(2, t.arch).Bind(3, t.device).Bind(4, t.driver).Bind(5, t.toolkit);
      select_target->Bind(1, t.kind).Bind(2, t.arch).Bind(3, t.device).Bind(4, t.driver).Bind(5, t.toolkit);
      auto id = id_of(*insert_target, *select_target);
      if (!id) return fail(id.error());
      tit = target_ids.emplace(tkey, *id).first;
    }
    auto& s = *insert_record;
    s.Reset();
    s.Bind(1, wit->second).Bind(2, tit->second).Bind(3, r.trace_json).Bind(4, r.trace_hash);
    s.Bind(5, r.trace_format_version);
    BindMeasurement(s, r, 6);
    if (auto run = s.Run(); !run) return fail(run.error());
    inserted += conn.Changes();
  }
  if (auto c = tx->Commit(); !c) return fail(c.error());
  return inserted;
}

Result<bool> TuningDatabase::ReplaceMeasurement(const TuningRecord& r) {
  std::lock_guard lock(impl_->mu);
  if (read_only()) return MakeError(fmt::format("{}: opened read-only", impl_->path));
  if (auto checked = CheckRecord(r, 0); !checked) return checked.error();
  auto& conn = impl_->conn;
  auto fail = [&](const Error& e) { return MakeError(fmt::format("{}: re-measuring a record: {}", impl_->path, e.message)); };
  auto s = conn.Prepare(R"sql(
    UPDATE records SET latencies_json = ?1, median_ms = ?2, gflops = ?3, correct = ?4, max_rel_error = ?5,
                       error_kind = ?6, error_message = ?7, measured_at = ?8, autotune_version = ?9, info_json = ?10
    WHERE trace_hash = ?11 AND workload_id = (SELECT id FROM workloads WHERE key = ?12)
      AND target_id = (SELECT id FROM targets WHERE kind = ?13 AND arch = ?14 AND device = ?15 AND driver = ?16
                                                AND toolkit = ?17))sql");
  if (!s) return fail(s.error());
  BindMeasurement(*s, r, 1);
  s->Bind(11, r.trace_hash).Bind(12, r.workload.key);
  const TargetInfo& t = r.target;
  s->Bind(13, t.kind).Bind(14, t.arch).Bind(15, t.device).Bind(16, t.driver).Bind(17, t.toolkit);
  if (auto run = s->Run(); !run) return fail(run.error());
  return conn.Changes() > 0;
}

Result<void> TuningDatabase::SaveCostModel(const StoredCostModel& model) {
  std::lock_guard lock(impl_->mu);
  if (read_only()) return MakeError(fmt::format("{}: opened read-only", impl_->path));
  if (model.name.empty()) return MakeError("a cost model needs a name");
  auto& conn = impl_->conn;
  auto fail = [&](const Error& e) {
    return MakeError(fmt::format("{}: saving cost model '{}': {}", impl_->path, model.name, e.message));
  };
  auto tx = sqlite::Transaction::Begin(conn);
  if (!tx) return fail(tx.error());
  auto s = conn.Prepare(R"sql(
    INSERT INTO cost_models (name, feature_version, target_kind, blob, num_records, created_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6)
    ON CONFLICT (name) DO UPDATE SET feature_version = excluded.feature_version, target_kind = excluded.target_kind,
      blob = excluded.blob, num_records = excluded.num_records, created_at = excluded.created_at)sql");
  if (!s) return fail(s.error());
  s->Bind(1, model.name).Bind(2, model.feature_version).Bind(3, model.target_kind).BindBlob(4, model.blob);
  s->Bind(5, model.num_records).Bind(6, model.created_at.empty() ? NowIso8601() : model.created_at);
  if (auto r = s->Run(); !r) return fail(r.error());
  if (auto c = tx->Commit(); !c) return fail(c.error());
  return {};
}

// ---- Reading --------------------------------------------------------------------------------------

namespace {

// Wraps a query's error with the database path.
template <class T>
Result<T> Named(const std::string& path, Result<T> r) {
  if (!r) return MakeError(fmt::format("{}: {}", path, r.error().message));
  return r;
}

}  // namespace

Result<std::unordered_set<std::string>> TuningDatabase::MeasuredTraceHashes(const std::string& workload_key,
                                                                            const TargetInfo& target) {
  std::lock_guard lock(impl_->mu);
  auto run = [&]() -> Result<std::unordered_set<std::string>> {
    auto s = impl_->conn.Prepare(R"sql(
      SELECT r.trace_hash FROM records r JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id
      WHERE w.key = ?1 AND t.kind = ?2 AND t.arch = ?3 AND t.device = ?4)sql");
    if (!s) return s.error();
    s->Bind(1, workload_key).Bind(2, target.kind).Bind(3, target.arch).Bind(4, target.device);
    std::unordered_set<std::string> out;
    while (true) {
      auto row = s->Step();
      if (!row) return row.error();
      if (!*row) return out;
      out.insert(s->ColumnText(0));
    }
  };
  return Named(impl_->path, run());
}

Result<bool> TuningDatabase::HasMeasured(const std::string& workload_key, const TargetInfo& target,
                                         const std::string& trace_hash) {
  std::lock_guard lock(impl_->mu);
  auto run = [&]() -> Result<bool> {
    auto s = impl_->conn.Prepare(R"sql(
      SELECT EXISTS (SELECT 1 FROM records r
        JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id
      WHERE w.key = ?1 AND t.kind = ?2 AND t.arch = ?3 AND t.device = ?4 AND r.trace_hash = ?5))sql");
    if (!s) return s.error();
    s->Bind(1, workload_key).Bind(2, target.kind).Bind(3, target.arch).Bind(4, target.device).Bind(5, trace_hash);
    auto row = s->Step();
    if (!row) return row.error();
    return *row && s->ColumnInt(0) != 0;
  };
  return Named(impl_->path, run());
}

Result<std::vector<TuningRecord>> TuningDatabase::Best(const std::string& workload_key, const TargetQuery& query,
                                                       int limit) {
  std::lock_guard lock(impl_->mu);
  auto run = [&]() -> Result<std::vector<TuningRecord>> {
    // The validity terms are written exactly as in the partial index, so the planner can use it.
    auto s = impl_->conn.Prepare(std::string(kRecordColumns) + " FROM records r " + kRecordJoins + R"sql(
      WHERE w.key = ?1 AND t.kind = ?2 AND (?3 = '' OR t.arch = ?3) AND r.error_kind = 'NONE' AND r.correct = 1
        AND r.median_ms > 0
      ORDER BY r.median_ms, r.id LIMIT ?4)sql");
    if (!s) return s.error();
    s->Bind(1, workload_key)
        .Bind(2, query.kind)
        .Bind(3, query.arch)
        .Bind(4, static_cast<int64_t>(limit > 0 ? limit : -1));
    return BelievableOnly(ReadRecords(*s));
  };
  return Named(impl_->path, run());
}

Result<std::vector<TuningRecord>> TuningDatabase::BestOfEachWorkload(const std::string& op, const TargetQuery& query,
                                                                     int per_workload) {
  std::lock_guard lock(impl_->mu);
  auto run = [&]() -> Result<std::vector<TuningRecord>> {
    auto s = impl_->conn.Prepare(std::string(kRecordColumns) + R"sql(
      FROM (SELECT r.*, row_number() OVER (PARTITION BY r.workload_id, r.target_id ORDER BY r.median_ms, r.id) AS rank
            FROM records r JOIN targets t ON t.id = r.target_id
            WHERE t.kind = ?2 AND (?3 = '' OR t.arch = ?3) AND r.error_kind = 'NONE' AND r.correct = 1
              AND r.median_ms > 0) r
      )sql" + kRecordJoins + R"sql(
      WHERE (?1 = '' OR w.op = ?1) AND (?4 <= 0 OR r.rank <= ?4)
      ORDER BY w.op, w.key, t.kind, t.arch, t.device, t.driver, t.toolkit, r.rank)sql");
    if (!s) return s.error();
    s->Bind(1, op).Bind(2, query.kind).Bind(3, query.arch).Bind(4, per_workload);
    return BelievableOnly(ReadRecords(*s));
  };
  return Named(impl_->path, run());
}

Result<std::vector<WorkloadInfo>> TuningDatabase::Workloads() {
  std::lock_guard lock(impl_->mu);
  auto run = [&]() -> Result<std::vector<WorkloadInfo>> {
    auto s = impl_->conn.Prepare(
        "SELECT key, op, shape_json, epilogue, dtype, layout, flops FROM workloads ORDER BY op, key");
    if (!s) return s.error();
    std::vector<WorkloadInfo> out;
    while (true) {
      auto row = s->Step();
      if (!row) return row.error();
      if (!*row) return out;
      auto w = ReadWorkload(*s, 0);
      if (!w) return w.error();
      out.push_back(std::move(*w));
    }
  };
  return Named(impl_->path, run());
}

Result<void> TuningDatabase::ForEachRecord(const std::function<bool(const TuningRecord&)>& fn) {
  std::lock_guard lock(impl_->mu);
  auto run = [&]() -> Result<void> {
    auto s = impl_->conn.Prepare(std::string(kRecordColumns) + " FROM records r " + kRecordJoins + " ORDER BY r.id");
    if (!s) return s.error();
    while (true) {
      auto row = s->Step();
      if (!row) return row.error();
      if (!*row) return {};
      auto r = ReadRecord(*s);
      if (!r) return r.error();
      if (!fn(*r)) return {};
    }
  };
  auto r = run();
  if (!r) return MakeError(fmt::format("{}: {}", impl_->path, r.error().message));
  return {};
}

Result<DatabaseStats> TuningDatabase::Stats() {
  std::lock_guard lock(impl_->mu);
  auto run = [&]() -> Result<DatabaseStats> {
    auto& conn = impl_->conn;
    DatabaseStats st;
    st.schema_version = kSchemaVersion;
    auto workloads = conn.QueryInt("SELECT count(*) FROM workloads");
    if (!workloads) return workloads.error();
    auto records = conn.QueryInt("SELECT count(*) FROM records");
    if (!records) return records.error();
    auto models = conn.QueryInt("SELECT count(*) FROM cost_models");
    if (!models) return models.error();
    st.workloads = *workloads;
    st.records = *records;
    st.cost_models = *models;
    auto s = conn.Prepare(R"sql(
      SELECT t.kind, t.arch, t.device, t.driver, t.toolkit, count(DISTINCT r.workload_id), count(r.id),
             coalesce(sum(r.error_kind = 'NONE' AND r.correct = 1), 0)
      FROM targets t LEFT JOIN records r ON r.target_id = t.id
      GROUP BY t.id ORDER BY t.kind, t.arch, t.device, t.driver, t.toolkit)sql");
    if (!s) return s.error();
    while (true) {
      auto row = s->Step();
      if (!row) return row.error();
      if (!*row) return st;
      TargetStats t;
      t.target = TargetInfo{s->ColumnText(0), s->ColumnText(1), s->ColumnText(2), s->ColumnText(3), s->ColumnText(4)};
      t.workloads = s->ColumnInt(5);
      t.records = s->ColumnInt(6);
      t.valid = s->ColumnInt(7);
      t.invalid = t.records - t.valid;
      st.targets.push_back(std::move(t));
    }
  };
  return Named(impl_->path, run());
}

Result<TuningDatabase::RecordCounts> TuningDatabase::CountRecords(const std::string& workload_key,
                                                                  const std::optional<TargetQuery>& query) {
  std::lock_guard lock(impl_->mu);
  auto run = [&]() -> Result<RecordCounts> {
    auto s = impl_->conn.Prepare(R"sql(
      SELECT count(r.id), coalesce(sum(r.error_kind = 'NONE' AND r.correct = 1), 0)
      FROM records r JOIN workloads w ON w.id = r.workload_id JOIN targets t ON t.id = r.target_id
      WHERE w.key = ?1 AND (?2 = '' OR t.kind = ?2) AND (?3 = '' OR t.arch = ?3))sql");
    if (!s) return s.error();
    s->Bind(1, workload_key).Bind(2, query ? query->kind : "").Bind(3, query ? query->arch : "");
    auto row = s->Step();
    if (!row) return row.error();
    RecordCounts c;
    if (*row) {
      c.records = s->ColumnInt(0);
      c.valid = s->ColumnInt(1);
    }
    return c;
  };
  return Named(impl_->path, run());
}

Result<std::optional<StoredCostModel>> TuningDatabase::LoadCostModel(const std::string& name) {
  std::lock_guard lock(impl_->mu);
  auto run = [&]() -> Result<std::optional<StoredCostModel>> {
    auto s = impl_->conn.Prepare(
        "SELECT name, feature_version, target_kind, blob, num_records, created_at FROM cost_models WHERE name = ?1");
    if (!s) return s.error();
    s->Bind(1, name);
    auto row = s->Step();
    if (!row) return row.error();
    if (!*row) return std::optional<StoredCostModel>();
    StoredCostModel m;
    m.name = s->ColumnText(0);
    m.feature_version = s->ColumnText(1);
    m.target_kind = s->ColumnText(2);
    m.blob = s->ColumnBlob(3);
    m.num_records = s->ColumnInt(4);
    m.created_at = s->ColumnText(5);
    return std::optional<StoredCostModel>(std::move(m));
  };
  return Named(impl_->path, run());
}

Result<std::string> TuningDatabase::IntegrityCheck() {
  std::lock_guard lock(impl_->mu);
  auto run = [&]() -> Result<std::string> {
    auto s = impl_->conn.Prepare("PRAGMA integrity_check");
    if (!s) return s.error();
    std::string out;
    while (true) {
      auto row = s->Step();
      if (!row) return row.error();
      if (!*row) return out;
      out += (out.empty() ? "" : "\n") + s->ColumnText(0);
    }
  };
  return Named(impl_->path, run());
}

}  // namespace autotune::db
