// `autotune tune --workers` against real `autotune worker` processes on loopback (cpu target): a job
// spread over three workers; a worker killed with SIGKILL in the middle of a job (every candidate
// stored exactly once); a worker restarted during a job rejoins it; a job whose workers are all gone
// stops with status 2 and one line, keeping what it stored; a token the workers require.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/cli/run_cli.h"
#include "tests/measure/remote/worker_process.h"

namespace autotune {
namespace {

namespace fs = std::filesystem;
using testing::RunCli;
using testing::StartCli;
using testing::WorkerProcess;

class RemoteTune : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "remote_tune_test_" + std::to_string(getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "/";
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // (records, distinct traces, valid records) of a database.
  static std::array<int64_t, 3> Counts(const std::string& db) {
    sqlite3* h = nullptr;
    std::array<int64_t, 3> out{-1, -1, -1};
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* s = nullptr;
      if (sqlite3_prepare_v2(h, "SELECT count(*), count(DISTINCT trace_hash), sum(error_kind = 'NONE' AND correct) FROM records",
                             -1, &s, nullptr) == SQLITE_OK &&
          sqlite3_step(s) == SQLITE_ROW) {
        for (int i = 0; i < 3; ++i) out[i] = sqlite3_column_int64(s, i);
      }
      sqlite3_finalize(s);
    }
    sqlite3_close(h);
    return out;
  }

  // Starts `tune` in the background; returns its pid (stderr into dir_/tune.log).
  pid_t StartTune(const std::string& args) {
    std::vector<std::string> argv = {"tune"};
    std::istringstream in(args);
    for (std::string a; in >> a;) argv.push_back(a);
    return StartCli(argv, dir_ + "tune.log", nullptr);
  }
  static int Wait(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  static bool WaitFor(const std::function<bool()>& done, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  }
  std::string Log() const {
    std::ifstream in(dir_ + "tune.log");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  std::string dir_;
};

const std::string kJob = " --op gemm --shape M=32,N=32,K=32 --target cpu --repeats 1 --min-repeat-ms 1";

TEST_F(RemoteTune, AJobIsSpreadOverThreeWorkers) {
  WorkerProcess a, b, c;
  ASSERT_TRUE(a.Start(dir_ + "a.log") && b.Start(dir_ + "b.log") && c.Start(dir_ + "c.log"));
  const std::string db = dir_ + "spread.db";
  auto r = RunCli("tune" + kJob + " --trials 48 --batch-size 24 --db " + db + " --workers " + a.Address() + "," +
                  b.Address() + "," + c.Address());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("measuring on 3 of 3 workers"), std::string::npos) << r.err;
  EXPECT_EQ(Counts(db), (std::array<int64_t, 3>{48, 48, 48}));
  EXPECT_GE(a.Batches(), 1);
  EXPECT_GE(b.Batches(), 1);
  EXPECT_GE(c.Batches(), 1);
}

TEST_F(RemoteTune, AWorkerKilledMidJobLosesNothingAndStoresNothingTwice) {
  WorkerProcess a, b;
  ASSERT_TRUE(a.Start(dir_ + "a.log") && b.Start(dir_ + "b.log"));
  const std::string db = dir_ + "killed.db";
  const pid_t tune = StartTune(kJob + " --trials 96 --batch-size 16 --db " + db + " --workers " + a.Address() + "," +
                               b.Address());
  ASSERT_GT(tune, 0);
  ASSERT_TRUE(WaitFor([&] { return b.Batches() >= 1; }, 60)) << Log();
  b.Kill(SIGKILL);
  EXPECT_EQ(Wait(tune), 0) << Log();
  EXPECT_EQ(Counts(db), (std::array<int64_t, 3>{96, 96, 96})) << Log();
}

TEST_F(RemoteTune, ARestartedWorkerRejoinsTheJob) {
  WorkerProcess a, b;
  ASSERT_TRUE(a.Start(dir_ + "a.log") && b.Start(dir_ + "b.log"));
  const int port = b.port;
  const std::string db = dir_ + "rejoin.db";
  const pid_t tune = StartTune(kJob + " --trials 96 --batch-size 8 --db " + db + " --workers " + a.Address() + "," +
                               b.Address());
  ASSERT_GT(tune, 0);
  ASSERT_TRUE(WaitFor([&] { return b.Batches() >= 1; }, 60)) << Log();
  b.Kill(SIGKILL);
  WorkerProcess again;
  ASSERT_TRUE(WaitFor([&] { return again.Start(dir_ + "b2.log", port); }, 10));
  EXPECT_TRUE(WaitFor([&] { return again.Batches() >= 1; }, 60)) << "the restarted worker gets work\n" << Log();
  EXPECT_EQ(Wait(tune), 0) << Log();
  EXPECT_EQ(Counts(db), (std::array<int64_t, 3>{96, 96, 96})) << Log();
}

TEST_F(RemoteTune, AJobWhoseWorkersAreAllGoneStopsWithStatusTwo) {
  const std::string db = dir_ + "gone.db";
  {
    WorkerProcess a;
    ASSERT_TRUE(a.Start(dir_ + "a.log"));
    const pid_t tune = StartTune(kJob + " --trials 400 --batch-size 8 --db " + db + " --workers " + a.Address());
    ASSERT_TRUE(WaitFor([&] { return a.Batches() >= 2; }, 60)) << Log();
    a.Kill(SIGKILL);
    EXPECT_EQ(Wait(tune), 2) << Log();
  }
  const std::string log = Log();
  EXPECT_NE(log.find("no worker can measure"), std::string::npos) << log;
  const auto counts = Counts(db);
  EXPECT_GE(counts[0], 16) << "the batches measured before are kept";
  EXPECT_EQ(counts[0], counts[1]);
  EXPECT_EQ(counts[0], counts[2]) << "nothing is stored as failed for the lost worker's sake";
  // Unreachable from the start: one line, status 2.
  auto r = RunCli("tune" + kJob + " --trials 8 --db " + db + " --workers 127.0.0.1:1");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("no usable worker: 127.0.0.1:1"), std::string::npos) << r.err;
}

TEST_F(RemoteTune, WorkersThatRequireATokenRefuseJobsWithoutIt) {
  const std::string token = dir_ + "token";
  std::ofstream(token) << "s3cret-token\n";
  WorkerProcess a;
  ASSERT_TRUE(a.Start(dir_ + "a.log", 0, {"--token-file", token}));
  const std::string db = dir_ + "token.db";
  auto refused = RunCli("tune" + kJob + " --trials 8 --db " + db + " --workers " + a.Address());
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_NE(refused.err.find(a.Address()), std::string::npos) << refused.err;
  auto ok = RunCli("tune" + kJob + " --trials 8 --batch-size 8 --db " + db + " --workers " + a.Address() +
                   " --token-file " + token);
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(Counts(db)[2], 8);
}

}  // namespace
}  // namespace autotune
