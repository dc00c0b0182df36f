// `autotune tune --workers` against real `autotune worker` processes on loopback (cpu target): a job
// spread over three workers; a worker killed with SIGKILL in the middle of a job (every candidate
// stored exactly once); a worker restarted during a job rejoins it; a job whose workers are all gone
// stops with status 2 and one line, keeping what it stored; a token the workers require; mutual TLS
// (a job with the CA's client certificate is served, one without or with another CA's is refused).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
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

// A small search (--population 128) and no re-measurement at its end: these tests are about the
// workers (the batches they took), not the search.
const std::string kJob =
    " --op gemm --shape M=32,N=32,K=32 --target cpu --repeats 1 --min-repeat-ms 1 --population 128 --remeasure-best 0";

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

  // A job of `trials` in rounds of 24 on three workers, given as "a,b,c" after `scheme` ("" or a gRPC
  // scheme such as "ipv4:"): it says `line`, stores every candidate once, and every worker gets
  // work. Returns the batches each worker logged.
  std::array<int, 3> TuneOnThreeWorkers(const std::string& scheme, int trials, const std::string& line) {
    WorkerProcess w[3];
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(w[i].Start(dir_ + std::to_string(i) + ".log"));
    const std::string db = dir_ + "three.db";
    auto r = RunCli("tune" + kJob + " --trials " + std::to_string(trials) + " --batch-size 24 --db " + db +
                    " --workers " + scheme + w[0].Address() + "," + w[1].Address() + "," + w[2].Address());
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find(line), std::string::npos) << r.err;
    EXPECT_EQ(Counts(db), (std::array<int64_t, 3>{trials, trials, trials}));
    std::array<int, 3> batches{};
    for (int i = 0; i < 3; ++i) {
      batches[i] = w[i].Batches();
      EXPECT_GE(batches[i], 1) << "worker " << i;
    }
    return batches;
  }

  // Two workers, given as "a,b" after `scheme` ("" or a gRPC scheme such as "ipv4:"); the second is
  // killed with SIGKILL once it measured a batch: the job still stores every candidate exactly once.
  void KillOneOfTwoWorkersMidJob(const std::string& scheme) {
    WorkerProcess a, b;
    ASSERT_TRUE(a.Start(dir_ + "a.log") && b.Start(dir_ + "b.log"));
    const std::string db = dir_ + "killed.db";
    const pid_t tune = StartTune(kJob + " --trials 96 --batch-size 16 --db " + db + " --workers " + scheme +
                                 a.Address() + "," + b.Address());
    ASSERT_GT(tune, 0);
    ASSERT_TRUE(WaitFor([&] { return b.Batches() >= 1; }, 60)) << Log();
    b.Kill(SIGKILL);
    EXPECT_EQ(Wait(tune), 0) << Log();
    EXPECT_EQ(Counts(db), (std::array<int64_t, 3>{96, 96, 96})) << Log();
  }

  std::string dir_;
};

TEST_F(RemoteTune, AJobIsSpreadOverThreeWorkers) {
  const auto batches = TuneOnThreeWorkers("", 48, "measuring on 3 of 3 workers");
  EXPECT_EQ(batches[0] + batches[1] + batches[2], 2 * 3) << "2 batches, a share to each worker";
}

TEST_F(RemoteTune, AWorkerKilledMidJobLosesNothingAndStoresNothingTwice) {
  KillOneOfTwoWorkersMidJob("");
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

TEST_F(RemoteTune, ANameWithSeveralAddressesGetsOneCallPerAddressPerBatch) {
  // "ipv4:a,b,c" is a gRPC target with three addresses, as a dns:/// name of three pods resolves to.
  const auto batches = TuneOnThreeWorkers("ipv4:", 72, "measuring on 1 of 1 worker, 3 addresses");
  EXPECT_GE(batches[0] + batches[1] + batches[2], 7) << "3 batches, each split into 3 calls";
}

TEST_F(RemoteTune, OneAddressOfANameKilledMidJobLosesNothing) {
  KillOneOfTwoWorkersMidJob("ipv4:");
}

TEST_F(RemoteTune, AWorkerStoppedWithSigtermMidJobFinishesItsCallAndTheJobGoesOn) {
  WorkerProcess a, b;
  ASSERT_TRUE(a.Start(dir_ + "a.log") && b.Start(dir_ + "b.log"));
  const std::string db = dir_ + "sigterm.db";
  // Larger kernels than kJob's, so that a batch takes a while and the signal comes during one.
  const pid_t tune = StartTune(" --op gemm --shape M=96,N=96,K=96 --target cpu --repeats 1 --min-repeat-ms 1"
                               " --population 128 --trials 96 --batch-size 16 --db " + db + " --workers " + a.Address() + "," + b.Address());
  ASSERT_GT(tune, 0);
  ASSERT_TRUE(WaitFor([&] { return b.Batches() >= 1; }, 120)) << Log();
  kill(b.pid, SIGTERM);
  const int worker_status = Wait(b.pid);
  b.pid = -1;
  EXPECT_EQ(worker_status, 0) << "a graceful stop";
  std::ifstream in(b.log);
  const std::string worker_log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(worker_log.find("stopped after"), std::string::npos) << worker_log;
  EXPECT_EQ(Wait(tune), 0) << Log();
  EXPECT_EQ(Counts(db), (std::array<int64_t, 3>{96, 96, 96})) << Log();
}

// The PEM files of tests/measure/remote/make_test_certs.sh (openssl) in `dir`.
void MakeCerts(const std::string& dir) {
  const std::string cmd = std::string("bash ") + CERT_SCRIPT + " " + dir + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl is needed (scripts/install-deps installs it)";
}

TEST_F(RemoteTune, TlsWorkersServeJobsWithTheirCasClientCertificateOnly) {
  MakeCerts(dir_);
  const auto pem = [&](const std::string& name) { return dir_ + name + ".pem"; };
  const auto key = [&](const std::string& name) { return dir_ + name + ".key"; };
  WorkerProcess a;
  ASSERT_TRUE(a.Start(dir_ + "a.log", 0,
                      {"--tls-cert", pem("worker"), "--tls-key", key("worker"), "--tls-client-ca", pem("ca")}));
  const std::string db = dir_ + "tls.db";
  const std::string job = "tune" + kJob + " --trials 8 --batch-size 8 --db " + db + " --workers " + a.Address();
  auto ok = RunCli(job + " --tls-cert " + pem("job") + " --tls-key " + key("job") + " --tls-ca " + pem("ca"));
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(Counts(db)[2], 8);

  // Refused: plaintext; a client certificate of another CA; a job that does not trust the worker's CA.
  // Each waits out the connect timeout, so they run at once.
  const std::vector<std::string> refused = {
      job,
      job + " --tls-cert " + pem("rogue-job") + " --tls-key " + key("rogue-job") + " --tls-ca " + pem("ca"),
      job + " --tls-cert " + pem("job") + " --tls-key " + key("job") + " --tls-ca " + pem("rogue-ca"),
  };
  std::vector<pid_t> pids;
  for (size_t i = 0; i < refused.size(); ++i) {
    std::vector<std::string> argv;
    std::istringstream in(refused[i]);
    for (std::string w; in >> w;) argv.push_back(w);
    pids.push_back(StartCli(argv, dir_ + "refused" + std::to_string(i) + ".log", nullptr));
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    EXPECT_EQ(Wait(pids[i]), 2) << refused[i];
    std::ifstream in(dir_ + "refused" + std::to_string(i) + ".log");
    const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(log.find("no usable worker"), std::string::npos) << refused[i] << "\n" << log;
  }
  EXPECT_EQ(Counts(db)[0], 8) << "nothing of the refused jobs is stored";
}

TEST_F(RemoteTune, TlsFlagsAreCheckedBeforeAnythingStarts) {
  MakeCerts(dir_);
  const std::string cert = dir_ + "worker.pem", key = dir_ + "worker.key", ca = dir_ + "ca.pem";
  const std::string not_pem = dir_ + "worker.ext";
  for (const std::string& args :
       {"worker --target cpu --listen 127.0.0.1:0 --tls-cert " + cert,
        "worker --target cpu --listen 127.0.0.1:0 --tls-cert " + cert + " --tls-key " + key + " --tls-client-ca " + not_pem,
        "worker --target cpu --listen 127.0.0.1:0 --tls-cert " + cert + " --tls-key " + dir_ + "missing.key --tls-client-ca " + ca,
        "tune" + kJob + " --db " + dir_ + "x.db --workers 127.0.0.1:1 --tls-ca " + ca,
        "tune" + kJob + " --db " + dir_ + "x.db --tls-cert " + cert + " --tls-key " + key + " --tls-ca " + ca}) {
    const auto r = RunCli(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_EQ(testing::Lines(r.err), 1) << args << ": " << r.err;
  }
  // TLS alone is enough to listen beyond loopback.
  std::string line;
  const pid_t any = StartCli({"worker", "--target", "cpu", "--listen", "0.0.0.0:0", "--tls-cert", cert, "--tls-key",
                              key, "--tls-client-ca", ca},
                             dir_ + "any.log", &line);
  EXPECT_NE(line.find("TLS, client certificates required"), std::string::npos) << line;
  kill(any, SIGTERM);
  EXPECT_EQ(Wait(any), 0);
}

}  // namespace
}  // namespace autotune
