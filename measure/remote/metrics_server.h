// A worker's `--metrics ADDR`: answers `GET /metrics` with the Prometheus text exposition format
// (what a Prometheus server scrapes) and anything else with 404. It is one GET endpoint read by a
// scraper every few seconds, so it is a small server of its own on a thread rather than a web
// framework: one connection at a time, requests over 8 KiB or slower than 5 s are dropped.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "measure/remote/worker_service.h"
#include "support/result.h"

namespace autotune::measure::remote {

class MetricsServer {
 public:
  // Listens on "HOST:PORT" (an IPv4 address or "localhost"; port 0 picks a free one); `render` makes
  // the page on the server's thread.
  static Result<std::unique_ptr<MetricsServer>> Start(const std::string& address, std::function<std::string()> render);
  ~MetricsServer();  // stops the thread and closes the socket
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }

 private:
  MetricsServer() = default;
  void Loop();
  void Answer(int fd);

  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  int port_ = 0;
  std::function<std::string()> render_;
  std::thread thread_;
};

// The counters in the Prometheus text format (autotune_worker_* metrics).
std::string PrometheusText(const WorkerCounters::Values& v);

}  // namespace autotune::measure::remote
