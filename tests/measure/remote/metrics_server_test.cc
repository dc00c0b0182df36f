// The worker's Prometheus endpoint: GET /metrics answers the counters in the text format, other paths
// 404, other methods 405; a bad address is an error; the worker CLI serves it with --metrics.
#include "measure/remote/metrics_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>

#include "tests/measure/remote/worker_process.h"

namespace autotune::measure::remote {
namespace {

// One HTTP request to 127.0.0.1:port; the whole response.
std::string Http(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    char buf[4096];
    for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

TEST(MetricsServer, AnswersGetMetricsInThePrometheusTextFormat) {
  WorkerCounters counters;
  counters.AddBatch();
  counters.AddBuilt(5);
  counters.AddRun(4);
  counters.AddFailed(ErrorKind::kRunError);
  auto server = MetricsServer::Start("127.0.0.1:0", [&] { return PrometheusText(counters.Snapshot()); });
  ASSERT_TRUE(server) << server.error().message;
  const int port = (*server)->port();
  ASSERT_GT(port, 0);
  const std::string r = Http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(r.find("# TYPE autotune_worker_batches_total counter\nautotune_worker_batches_total 1\n"), std::string::npos) << r;
  EXPECT_NE(r.find("autotune_worker_candidates_built_total 5\n"), std::string::npos);
  EXPECT_NE(r.find("autotune_worker_candidates_run_total 4\n"), std::string::npos);
  EXPECT_NE(r.find("autotune_worker_candidates_failed_total{kind=\"RUN_ERROR\"} 1\n"), std::string::npos);
  EXPECT_NE(r.find("autotune_worker_candidates_failed_total{kind=\"BUILD_ERROR\"} 0\n"), std::string::npos);
  EXPECT_NE(r.find("# TYPE autotune_worker_queue_length gauge"), std::string::npos);
  // Content-Length matches the body.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r, m, std::regex(R"(Content-Length: (\d+)\r\n)")));
  EXPECT_EQ(r.size() - (r.find("\r\n\r\n") + 4), std::stoul(m[1]));

  EXPECT_EQ(Http(port, "GET / HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(Http(port, "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
  // Still serving after those.
  EXPECT_EQ(Http(port, "GET /metrics HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 200 OK", 0), 0u);
}

TEST(MetricsServer, BadAddressesAreErrors) {
  for (const char* address : {"nowhere", "127.0.0.1:http", "300.1.1.1:0", "127.0.0.1:70000"}) {
    auto s = MetricsServer::Start(address, [] { return std::string(); });
    EXPECT_FALSE(s) << address;
  }
}

TEST(MetricsServer, TheWorkerServesItWithTheMetricsFlag) {
  std::string line;
  const pid_t pid = autotune::testing::StartCli(
      {"worker", "--target", "cpu", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"}, "", &line);
  ASSERT_GT(pid, 0);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(R"(metrics on port (\d+))"))) << line;
  const std::string r = Http(std::stoi(m[1]), "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_NE(r.find("autotune_worker_batches_total 0\n"), std::string::npos) << r;
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace autotune::measure::remote
