#include "db/sqlite.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cctype>
#include <utility>

namespace autotune::db::sqlite {

// ---- Connection -----------------------------------------------------------------------------------

Result<Connection> Connection::Open(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    // SQLite hands back a handle even on failure, to carry the message; it must still be closed.
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return MakeError(msg);
  }
  return Connection(db);
}

namespace {

// A path as a file: URI (RFC 3986 percent-encoding of everything but unreserved characters and '/').
std::string FileUri(const std::string& path) {
  std::string uri = path.starts_with('/') ? "file://" : "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      uri.push_back(static_cast<char>(c));
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri;
}

}  // namespace

Result<Connection> Connection::OpenImmutable(const std::string& path) {
  return Open(FileUri(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
}

Result<Connection> Connection::OpenMemory() { return Open(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE); }

Connection::Connection(Connection&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

// close_v2: statements still alive (a bug elsewhere) delay the close instead of leaking the handle.
Connection::~Connection() {
  if (db_) sqlite3_close_v2(db_);
}

Result<void> Connection::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    return MakeError(msg);
  }
  return {};
}

Result<Statement> Connection::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return MakeError(sqlite3_errmsg(db_));
  }
  return Statement(db_, stmt);
}

Result<int64_t> Connection::QueryInt(std::string_view sql) {
  auto stmt = Prepare(sql);
  if (!stmt) return stmt.error();
  auto row = stmt->Step();
  if (!row) return row.error();
  if (!*row) return MakeError(fmt::format("no result from '{}'", sql));
  return stmt->ColumnInt(0);
}

Result<std::string> Connection::QueryText(std::string_view sql) {
  auto stmt = Prepare(sql);
  if (!stmt) return stmt.error();
  auto row = stmt->Step();
  if (!row) return row.error();
  if (!*row) return MakeError(fmt::format("no result from '{}'", sql));
  return stmt->ColumnText(0);
}

void Connection::SetBusyTimeout(int ms) { sqlite3_busy_timeout(db_, ms); }
int Connection::Changes() const { return sqlite3_changes(db_); }
int Connection::ErrorCode() const { return sqlite3_errcode(db_) & 0xff; }
std::string Connection::ErrorMessage() const { return sqlite3_errmsg(db_); }

Result<Connection> Connection::CopyToMemory() {
  auto mem = OpenMemory();
  if (!mem) return mem.error();
  sqlite3_backup* backup = sqlite3_backup_init(mem->get(), "main", db_, "main");
  if (!backup) return MakeError(fmt::format("cannot copy the database into memory: {}", mem->ErrorMessage()));
  // Steps until done; a busy source (another process writing) is waited for, as the busy handler
  // would, for about 30 s.
  int rc;
  for (int waits = 0;
       (rc = sqlite3_backup_step(backup, -1)) == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED;) {
    if (++waits > 3000) break;
    sqlite3_sleep(10);
  }
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) return MakeError(fmt::format("cannot copy the database into memory: {}", sqlite3_errstr(rc)));
  return mem;
}

// ---- Statement ------------------------------------------------------------------------------------

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_error_(std::move(other.bind_error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_error_ = std::move(other.bind_error_);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::NoteBind(int rc, int index) {
  if (rc != SQLITE_OK && bind_error_.empty()) {
    bind_error_ = fmt::format("cannot bind parameter {}: {}", index, sqlite3_errmsg(db_));
  }
}

Statement& Statement::Bind(int index, int64_t value) {
  NoteBind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  NoteBind(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  NoteBind(sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8), index);
  return *this;
}

Statement& Statement::BindBlob(int index, const std::vector<uint8_t>& blob) {
  // A zero-length blob with a null pointer would bind NULL: give SQLite a valid pointer.
  static const uint8_t kEmpty = 0;
  NoteBind(sqlite3_bind_blob64(stmt_, index, blob.empty() ? &kEmpty : blob.data(), blob.size(), SQLITE_TRANSIENT),
           index);
  return *this;
}

Statement& Statement::BindNull(int index) {
  NoteBind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

Result<bool> Statement::Step() {
  if (!bind_error_.empty()) return MakeError(bind_error_);
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return MakeError(sqlite3_errmsg(db_));
}

Result<void> Statement::Run() {
  while (true) {
    auto row = Step();
    if (!row) return row.error();
    if (!*row) return {};
  }
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_.clear();
}

int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::ColumnText(int col) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  return text ? std::string(text, sqlite3_column_bytes(stmt_, col)) : std::string();
}

std::vector<uint8_t> Statement::ColumnBlob(int col) const {
  const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, col));
  return data ? std::vector<uint8_t>(data, data + sqlite3_column_bytes(stmt_, col)) : std::vector<uint8_t>();
}

bool Statement::ColumnIsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

// ---- Transaction ----------------------------------------------------------------------------------

Result<Transaction> Transaction::Begin(Connection& conn) {
  // The busy timeout waits for the lock; under heavy contention (many writers on a loaded machine)
  // one wait may not be enough, so a few more are allowed before giving up.
  constexpr int kAttempts = 4;
  for (int attempt = 1;; ++attempt) {
    auto r = conn.Exec("BEGIN IMMEDIATE");
    if (r) return Transaction(&conn);
    if (conn.ErrorCode() != SQLITE_BUSY || attempt == kAttempts) {
      return MakeError(fmt::format("cannot start a write transaction: {}", r.error().message));
    }
  }
}

Transaction::Transaction(Transaction&& other) noexcept : conn_(std::exchange(other.conn_, nullptr)) {}

Transaction::~Transaction() {
  // SQLite rolls some failures back by itself; then there is nothing left to roll back.
  if (conn_ && !sqlite3_get_autocommit(conn_->get())) sqlite3_exec(conn_->get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

Result<void> Transaction::Commit() {
  if (!conn_) return MakeError("the transaction is already finished");
  if (auto r = conn_->Exec("COMMIT"); !r) return r;  // still open: the destructor rolls it back
  conn_ = nullptr;
  return {};
}

}  // namespace autotune::db::sqlite
