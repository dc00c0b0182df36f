#include "measure/remote/metrics_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace autotune::measure::remote {

namespace {

constexpr size_t kMaxRequest = 8 << 10;
constexpr int kRequestTimeoutMs = 5000;

void SendAll(int fd, const std::string& data) {
  for (size_t off = 0; off < data.size();) {
    const ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;  // the scraper went away: nothing to do
    off += static_cast<size_t>(n);
  }
}

std::string Response(const char* status, const std::string& body) {
  return fmt::format("HTTP/1.1 {}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\n"
                     "Connection: close\r\n\r\n{}",
                     status, body.size(), body);
}

}  // namespace

std::string PrometheusText(const WorkerCounters::Values& v) {
  std::string s;
  auto metric = [&](const char* name, const char* type, const char* help, const std::string& samples) {
    s += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}", name, help, name, type, samples);
  };
  metric("autotune_worker_batches_total", "counter", "Measure calls accepted.",
         fmt::format("autotune_worker_batches_total {}\n", v.batches));
  metric("autotune_worker_rejected_busy_total", "counter", "Measure calls refused because the queue was full.",
         fmt::format("autotune_worker_rejected_busy_total {}\n", v.rejected_busy));
  metric("autotune_worker_candidates_built_total", "counter", "Candidates built without error.",
         fmt::format("autotune_worker_candidates_built_total {}\n", v.candidates_built));
  metric("autotune_worker_candidates_run_total", "counter", "Candidates handed to the runner.",
         fmt::format("autotune_worker_candidates_run_total {}\n", v.candidates_run));
  std::string failed;
  for (int k = 1; k < WorkerCounters::kKinds; ++k) {
    failed += fmt::format("autotune_worker_candidates_failed_total{{kind=\"{}\"}} {}\n",
                          ErrorKindName(static_cast<ErrorKind>(k)), v.failed[k]);
  }
  metric("autotune_worker_candidates_failed_total", "counter", "Candidates that ended in an error, by kind.", failed);
  metric("autotune_worker_queue_length", "gauge", "Measure calls accepted and not finished.",
         fmt::format("autotune_worker_queue_length {}\n", v.queued));
  metric("autotune_worker_busy_seconds_total", "counter", "Seconds the device was running candidates.",
         fmt::format("autotune_worker_busy_seconds_total {:.3f}\n", v.busy_seconds));
  return s;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& address,
                                                            std::function<std::string()> render) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return MakeError(fmt::format("--metrics '{}' is not HOST:PORT", address));
  std::string host = address.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  if (host.empty()) host = "0.0.0.0";
  int port = -1;
  try {
    size_t used = 0;
    port = std::stoi(address.substr(colon + 1), &used);
    if (used != address.size() - colon - 1) port = -1;
  } catch (...) {
    port = -1;
  }
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  if (port < 0 || port > 65535 || inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1) {
    return MakeError(fmt::format("--metrics '{}' is not an IPv4 HOST:PORT", address));
  }
  sa.sin_port = htons(static_cast<uint16_t>(port));

  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->render_ = std::move(render);
  s->listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s->listen_fd_ < 0) return MakeError(std::string("metrics socket: ") + std::strerror(errno));
  const int one = 1;
  setsockopt(s->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || listen(s->listen_fd_, 16) != 0) {
    return MakeError(fmt::format("cannot serve metrics on '{}': {}", address, std::strerror(errno)));
  }
  socklen_t len = sizeof sa;
  getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
  s->port_ = ntohs(sa.sin_port);
  if (pipe2(s->stop_pipe_, O_CLOEXEC) != 0) return MakeError(std::string("metrics pipe: ") + std::strerror(errno));
  s->thread_ = std::thread([p = s.get()] { p->Loop(); });
  return s;
}

MetricsServer::~MetricsServer() {
  if (thread_.joinable()) {
    const char c = 0;
    ssize_t ignored = write(stop_pipe_[1], &c, 1);
    (void)ignored;
    thread_.join();
  }
  for (int fd : {listen_fd_, stop_pipe_[0], stop_pipe_[1]}) {
    if (fd >= 0) close(fd);
  }
}

void MetricsServer::Loop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Answer(fd);
    close(fd);
  }
}

void MetricsServer::Answer(int fd) {
  std::string request;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kRequestTimeoutMs);
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequest) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return;
    char buf[1024];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    request.append(buf, static_cast<size_t>(n));
  }
  const size_t line_end = request.find("\r\n");
  const std::string line = request.substr(0, line_end);
  if (line.rfind("GET /metrics ", 0) == 0 || line.rfind("GET /metrics?", 0) == 0) {
    SendAll(fd, Response("200 OK", render_()));
  } else if (line.rfind("GET ", 0) == 0) {
    SendAll(fd, Response("404 Not Found", "autotune worker: the metrics are at /metrics\n"));
  } else {
    SendAll(fd, Response("405 Method Not Allowed", "GET /metrics only\n"));
  }
}

}  // namespace autotune::measure::remote
