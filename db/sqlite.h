// A thin RAII layer over the sqlite3 C API: a connection, a prepared statement, and a transaction
// guard. Failures are Result values carrying SQLite's own message; nothing here throws.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace autotune::db::sqlite {

class Statement;

class Connection {
 public:
  // `flags` are sqlite3_open_v2's (SQLITE_OPEN_READONLY, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE).
  // Opening reads nothing yet: the file's header is read by the first statement.
  static Result<Connection> Open(const std::string& path, int flags);
  // Read-only, without locks and without -wal/-shm files (SQLite's `immutable` URI parameter): for a
  // file no one is writing, in a directory this process may not write.
  static Result<Connection> OpenImmutable(const std::string& path);
  // A fresh private in-memory database.
  static Result<Connection> OpenMemory();

  Connection() = default;
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  sqlite3* get() const { return db_; }
  // Runs SQL text (one or more statements) that returns no rows needed by the caller.
  Result<void> Exec(const std::string& sql);
  Result<Statement> Prepare(std::string_view sql);
  // The first column of the first row of a query (e.g. a PRAGMA).
  Result<int64_t> QueryInt(std::string_view sql);
  Result<std::string> QueryText(std::string_view sql);

  void SetBusyTimeout(int ms);
  int Changes() const;
  // The primary result code (SQLITE_BUSY, SQLITE_NOTADB, ...) of the most recent failed call.
  int ErrorCode() const;
  std::string ErrorMessage() const;

  // Copies this database into a fresh in-memory one (sqlite3_backup): a read-only file can then be
  // migrated in memory without writing it.
  Result<Connection> CopyToMemory();

 private:
  explicit Connection(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

// Binds are chained and never fail on their own: the first bind error is reported by the next Step.
class Statement {
 public:
  Statement() = default;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQL text ("?1").
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view text);
  Statement& Bind(int index, const std::string& text) { return Bind(index, std::string_view(text)); }
  Statement& Bind(int index, const char* text) { return Bind(index, std::string_view(text)); }
  Statement& BindBlob(int index, const std::vector<uint8_t>& blob);
  Statement& BindNull(int index);

  // true: a row is ready to read; false: the statement is done.
  Result<bool> Step();
  // Steps to the end, ignoring rows (INSERT, UPDATE, DDL).
  Result<void> Run();
  // Ready to bind and run again.
  void Reset();

  // Columns are 0-based, as in sqlite3_column_*.
  int64_t ColumnInt(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;
  std::vector<uint8_t> ColumnBlob(int col) const;
  bool ColumnIsNull(int col) const;

 private:
  friend class Connection;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  void NoteBind(int rc, int index);
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string bind_error_;
};

// BEGIN IMMEDIATE: takes the write lock at the start, so a transaction never fails half-way for
// lack of it (a deferred one can get SQLITE_BUSY on its first write, without the busy handler being
// asked). Rolls back in its destructor unless committed.
class Transaction {
 public:
  // Waits for the write lock (the connection's busy timeout, retried a few times).
  static Result<Transaction> Begin(Connection& conn);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Result<void> Commit();

 private:
  explicit Transaction(Connection* conn) : conn_(conn) {}
  Connection* conn_ = nullptr;  // null once committed or rolled back
};

}  // namespace autotune::db::sqlite
