// Several processes writing one database at once lose nothing, and a writer killed with SIGKILL
// leaves every batch it committed, whole, in a file that passes the integrity check. Nothing here
// depends on timing: the kill comes after the child has reported some commits, wherever it is then.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>

#include "db/database.h"
#include "tests/db/db_test_util.h"

namespace autotune::db {
namespace {

using namespace autotune::db::testing;

// Runs `body` in a forked child; the child leaves through _exit (never through the test
// framework's exit path) with body's status.
pid_t Fork(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    int status = 1;
    try {
      status = body();
    } catch (...) {
    }
    std::fflush(stderr);
    _exit(status);
  }
  return pid;
}

int ExitStatus(pid_t pid) {
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int64_t CountRecords(TuningDatabase& db) {
  auto st = db.Stats();
  EXPECT_TRUE(st) << (st ? "" : st.error().message);
  return st ? st->records : -1;
}

TEST(DbConcurrency, TwoProcessesWritingAtOnceLoseNothing) {
  constexpr int kBatches = 200, kPerBatch = 4;
  const std::string path = TempPath("concurrent.db");
  // Both writers' records, made before forking: distinct traces of two workloads, so every record
  // of both writers is distinct.
  const auto w = Gemm("M=64,N=64,K=64"), v = Gemm("M=64,N=64,K=64", "relu");
  const std::vector<std::vector<TuningRecord>> records = {DistinctRecords(w, CpuTarget(), kBatches * kPerBatch),
                                                          DistinctRecords(v, CpuTarget(), kBatches * kPerBatch)};
  // The writers start together: each waits until the parent closes the start pipe.
  int start[2];
  ASSERT_EQ(pipe(start), 0);
  std::vector<pid_t> writers;
  for (const auto& mine : records) {
    // Both create the file at the same time too: the schema is made once.
    writers.push_back(Fork([&]() {
      close(start[1]);
      char c;
      if (read(start[0], &c, 1) != 0) return 5;
      auto db = TuningDatabase::Open(path);
      if (!db) {
        std::fprintf(stderr, "writer: %s\n", db.error().message.c_str());
        return 2;
      }
      for (int b = 0; b < kBatches; ++b) {
        std::vector<TuningRecord> batch(mine.begin() + b * kPerBatch, mine.begin() + (b + 1) * kPerBatch);
        auto n = (*db)->CommitBatch(batch);
        if (!n || *n != kPerBatch) {
          std::fprintf(stderr, "writer batch %d: %s\n", b, n ? "duplicates?" : n.error().message.c_str());
          return 3;
        }
      }
      return 0;
    }));
  }
  close(start[0]);
  close(start[1]);
  for (pid_t pid : writers) EXPECT_EQ(ExitStatus(pid), 0);

  auto db = TuningDatabase::Open(path);
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_EQ(*(*db)->IntegrityCheck(), "ok");
  EXPECT_EQ(CountRecords(**db), 2 * kBatches * kPerBatch);
  for (const auto& mine : records) {
    auto hashes = (*db)->MeasuredTraceHashes(mine[0].workload.key, CpuTarget());
    ASSERT_TRUE(hashes);
    EXPECT_EQ(hashes->size(), mine.size());
  }
}

TEST(DbConcurrency, KilledWriterLeavesEveryCommittedBatchWholeAndANewWriterResumes) {
  constexpr int kPerBatch = 5, kReportsBeforeKill = 20;
  const std::string path = TempPath("killed.db");
  // Batch b is kPerBatch records of its own workload (gemm with M = 8 (b + 1)), made in the child
  // as it goes, so the child keeps writing until it is killed.
  auto batch_workload = [](int b) { return Gemm("M=" + std::to_string(8 * (b + 1)) + ",N=32,K=16"); };
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = Fork([&]() {
    close(fds[0]);
    auto db = TuningDatabase::Open(path);
    if (!db) return 2;
    for (int b = 0; b < 100000; ++b) {
      auto n = (*db)->CommitBatch(DistinctRecords(batch_workload(b), CpuTarget(), kPerBatch));
      if (!n) {
        std::fprintf(stderr, "writer batch %d: %s\n", b, n.error().message.c_str());
        return 3;
      }
      if (write(fds[1], &b, sizeof b) != sizeof b) return 4;  // reported only once committed
    }
    return 0;
  });
  ASSERT_GT(child, 0);
  close(fds[1]);
  std::vector<int> committed;
  int b;
  while (committed.size() < kReportsBeforeKill && read(fds[0], &b, sizeof b) == sizeof b) committed.push_back(b);
  ASSERT_EQ(committed.size(), static_cast<size_t>(kReportsBeforeKill)) << "the writer stopped early";
  kill(child, SIGKILL);
  EXPECT_EQ(ExitStatus(child), 128 + SIGKILL);
  // Reports written before the kill landed are commits too.
  while (read(fds[0], &b, sizeof b) == sizeof b) committed.push_back(b);
  close(fds[0]);

  auto db = TuningDatabase::Open(path);
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_EQ(*(*db)->IntegrityCheck(), "ok");
  for (int c : committed) {
    auto counts = (*db)->CountRecords(batch_workload(c).Key(), std::nullopt);
    ASSERT_TRUE(counts);
    EXPECT_EQ(counts->records, kPerBatch) << "batch " << c;
  }
  // No batch is there in part, reported or not (the one in flight at the kill may be whole).
  auto workloads = (*db)->Workloads();
  ASSERT_TRUE(workloads);
  EXPECT_GE(workloads->size(), committed.size());
  EXPECT_LE(workloads->size(), committed.size() + 1);
  for (const auto& w : *workloads) EXPECT_EQ((*db)->CountRecords(w.key, std::nullopt)->records, kPerBatch);

  // A new writer carries on.
  const int next = committed.back() + 10;
  auto n = (*db)->CommitBatch(DistinctRecords(batch_workload(next), CpuTarget(), kPerBatch));
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, kPerBatch);
  EXPECT_EQ(*(*db)->IntegrityCheck(), "ok");
}

}  // namespace
}  // namespace autotune::db
