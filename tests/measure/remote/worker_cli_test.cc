// `autotune worker` as a user starts it: the loopback rule, the token file, --help, and a worker that
// serves on 127.0.0.1:0, answers Describe and stops with exit status 0 on SIGTERM.
#include <autotune/proto/measurement.grpc.pb.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/cli/run_cli.h"
#include "tests/measure/remote/worker_process.h"
#include "tests/temp_path.h"

namespace autotune {
namespace {

using testing::Lines;
using testing::RunCli;

std::string TempFile(const std::string& name, const std::string& text) {
  const std::string path = autotune::testing::TestTempPath("worker_cli_test", name);
  std::ofstream(path) << text;
  return path;
}

TEST(WorkerCli, HelpDescribesIt) {
  const auto r = RunCli("worker --help");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("--listen"), std::string::npos);
  EXPECT_NE(r.out.find("--token-file"), std::string::npos);
  EXPECT_NE(r.out.find("--queue"), std::string::npos);
  EXPECT_NE(r.out.find("loopback"), std::string::npos);
}

TEST(WorkerCli, NonLoopbackWithoutTokenIsAUsageError) {
  for (const char* address : {"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:50051"}) {
    const auto r = RunCli(std::string("worker --target cpu --listen ") + address);
    EXPECT_EQ(r.status, 2) << address << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("--token-file"), std::string::npos) << r.err;
  }
}

TEST(WorkerCli, BadListenAndTokenFilesAreUsageErrors) {
  const std::string empty = TempFile("empty", "\n");
  for (const std::string& args :
       {std::string("--listen nowhere"), std::string("--listen 127.0.0.1:99999"),
        std::string("--listen 127.0.0.1:0 --token-file /nonexistent/token"),
        "--listen 0.0.0.0:0 --token-file " + empty}) {
    const auto r = RunCli("worker --target cpu " + args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << args << ": " << r.err;
  }
  std::remove(empty.c_str());
}

// Starts the worker; returns its pid and the port of its ready line.
pid_t StartWorker(const std::vector<std::string>& args, int* port, std::string* line) {
  const pid_t pid = testing::StartCli(args, "", line);
  std::smatch m;
  if (std::regex_search(*line, m, std::regex(R"(on 127\.0\.0\.1:(\d+))"))) *port = std::stoi(m[1]);
  return pid;
}

TEST(WorkerCli, ServesWithTheTokenAndStopsOnSigterm) {
  const std::string token = TempFile("token", "cli-test-token\n");
  int port = 0;
  std::string line;
  const pid_t pid = StartWorker({"worker", "--target", "cpu", "--listen", "127.0.0.1:0", "--token-file", token,
                                 "--queue", "2"},
                                &port, &line);
  ASSERT_GT(pid, 0);
  EXPECT_NE(line.find("autotune worker: serving cpu:"), std::string::npos) << line;
  EXPECT_GT(port, 0) << line;
  if (port > 0) {
    auto stub = rpc::Measurement::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
    rpc::WorkerInfo info;
    {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      EXPECT_EQ(stub->Describe(&ctx, rpc::DescribeRequest(), &info).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ctx.AddMetadata("authorization", "Bearer cli-test-token");
    const grpc::Status s = stub->Describe(&ctx, rpc::DescribeRequest(), &info);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(info.target_kind(), "cpu");
    EXPECT_EQ(info.queue_capacity(), 2);
    EXPECT_FALSE(info.worker_version().empty());
  }
  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::remove(token.c_str());
}

// A port in use is refused: gRPC's default SO_REUSEPORT would let a second worker share it (and its
// requests) in silence, even a token-less one beside a token-protected one.
TEST(WorkerCli, APortInUseIsRefused) {
  testing::WorkerProcess first;
  ASSERT_TRUE(first.Start(autotune::testing::TestTempPath("worker_cli_test", "first.log")));
  const auto r = RunCli("worker --target cpu --listen " + first.Address());
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cannot listen on '" + first.Address() + "'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in use"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace autotune
