// autotune worker: the measurement daemon of a GPU (or cpu) machine. Tuning jobs send it generated
// candidates over gRPC (measure/remote/worker_service.h); it builds them, runs them one at a time on
// its device and streams the results back. It compiles and runs code it receives, so it listens on
// loopback unless a shared token or mutual TLS protects it.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

#include "cli/cli_error.h"
#include "cli/stop_signal.h"
#include "cli/secret_files.h"
#include "cli/command.h"
#include "cli/measure_options.h"
#include "cli/target_option.h"
#include "measure/cuda_driver.h"
#include "measure/remote/metrics_server.h"
#include "measure/remote/worker_service.h"
#include "tir/version.h"

namespace autotune::cli {

namespace {

struct WorkerCliOptions {
  std::string listen = "127.0.0.1:50051";
  std::string target = "auto";
  std::string token_file;
  std::string tls_cert, tls_key, tls_client_ca;
  int queue = 4;
  std::string metrics;  // HOST:PORT of the Prometheus endpoint; "" = none
  measure::MeasureConfig config;
};

// ---- the listening address --------------------------------------------------------------------------

struct HostPort {
  std::string host;  // without brackets; "" means every interface
  int port = 0;
};

// "host:port", "[v6]:port" or ":port"; the port is 0 (pick one) to 65535.
HostPort ParseListen(const std::string& address) {
  const size_t colon = address.rfind(':');
  const std::string bad = fmt::format("--listen '{}' is not HOST:PORT (e.g. 127.0.0.1:50051)", address);
  if (colon == std::string::npos) throw UserError{bad};
  HostPort hp;
  hp.host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) throw UserError{bad};
  hp.port = std::stoi(port);
  if (hp.port > 65535) throw UserError{bad};
  if (hp.host.size() >= 2 && hp.host.front() == '[' && hp.host.back() == ']') {
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  }
  return hp;
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

measure::remote::WorkerOptions MakeWorkerOptions(const WorkerCliOptions& o, const MeasureTarget& target) {
  measure::remote::WorkerOptions w;
  w.target_kind = target.info.kind;
  w.config = o.config;
  w.queue_capacity = o.queue;
  rpc::WorkerInfo& info = w.info;
  info.set_arch(target.info.arch);
  info.set_device(target.info.device);
  info.set_driver(target.info.driver);
  info.set_toolkit(target.info.toolkit);
  info.set_worker_version(kVersion);
  if (target.kind == tir::TargetKind::kCuda) {
    // Builders need not ask the GPU again (the executor process owns it).
    if (w.config.cuda_arch.empty()) w.config.cuda_arch = target.info.arch;
    if (auto device = measure::QueryCudaDeviceIsolated(o.config.cuda_device)) {
      info.set_sm_count(device->sm_count);
      info.set_memory_bytes(device->memory_bytes);
    }
  }
  const tir::TargetKind kind = target.kind;
  w.make_builder = [kind](const measure::MeasureConfig& c) { return MakeBuilder(kind, c); };
  w.make_runner = [kind](const measure::MeasureConfig& c) { return MakeRunner(kind, c); };
  return w;
}

}  // namespace

CommandRun AddWorkerCommand(CLI::App& app) {
  auto opts = std::make_shared<WorkerCliOptions>();
  auto* cmd = app.add_subcommand(
      "worker",
      "Serve measurements to tuning jobs over gRPC: build candidates in parallel, run them one at a time on "
      "this machine's device, stream results back. It compiles and runs code it receives: it listens on "
      "loopback unless --token-file or TLS (--tls-cert, --tls-key, --tls-client-ca) protects it. Stops gracefully "
      "on SIGINT/SIGTERM.");
  cmd->add_option("--listen", opts->listen,
                  "address to serve on, HOST:PORT (port 0: pick a free one); any non-loopback host needs --token-file or TLS")
      ->capture_default_str();
  cmd->add_option("--target", opts->target, "what to measure on: " + TargetOptionHelp(true))->capture_default_str();
  cmd->add_option("--token-file", opts->token_file,
                  "file holding a shared secret; every call must carry 'authorization: Bearer <secret>'");
  cmd->add_option("--tls-cert", opts->tls_cert, "TLS: this worker's certificate (PEM); with --tls-key and --tls-client-ca");
  cmd->add_option("--tls-key", opts->tls_key, "TLS: the certificate's private key (PEM)");
  cmd->add_option("--tls-client-ca", opts->tls_client_ca,
                  "TLS: CA certificate (PEM) that must have signed a job's client certificate; others are refused");
  cmd->add_option("--queue", opts->queue, "measurement batches accepted at once (running and waiting); more are refused")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--metrics", opts->metrics,
                  "serve counters for Prometheus at http://HOST:PORT/metrics (IPv4; port 0: pick a free one)");
  AddMeasureOptions(*cmd, opts->config);
  cmd->footer(
      "Examples:\n"
      "  autotune worker                                   # loopback only, no credentials\n"
      "  autotune worker --listen 0.0.0.0:50051 --token-file token\n"
      "  autotune tune --op gemm --shape M=1024,N=1024,K=1024 --workers gpu1:50051 --token-file token");
  return [opts]() {
    const HostPort hp = ParseListen(opts->listen);
    const auto tls = ReadTlsFiles(opts->tls_cert, opts->tls_key, opts->tls_client_ca,
                                  "--tls-cert, --tls-key and --tls-client-ca");
    if (!IsLoopback(hp.host) && opts->token_file.empty() && !tls) {
      throw UserError{fmt::format(
          "listening on '{}' (not loopback) needs --token-file or TLS (--tls-cert, --tls-key, --tls-client-ca): "
          "the worker compiles and runs code it receives",
          opts->listen)};
    }
    const std::string token = opts->token_file.empty() ? "" : ReadTokenFile(opts->token_file);
    const std::string kind = TakeTargetOption(opts->target, opts->config, /*allow_auto=*/true);
    const MeasureTarget target = ResolveMeasureTarget(kind, opts->config);
    measure::remote::WorkerOptions worker = MakeWorkerOptions(*opts, target);
    worker.token = token;
    measure::remote::WorkerService service(std::move(worker));

    InstallStopSignals("autotune worker: stopping: finishing the calls in flight (again to quit now)\n");
    std::unique_ptr<measure::remote::MetricsServer> metrics;
    if (!opts->metrics.empty()) {
      auto m = measure::remote::MetricsServer::Start(
          opts->metrics, [&service] { return measure::remote::PrometheusText(service.counters().Snapshot()); });
      if (!m) throw UserError{m.error().message};
      metrics = std::move(*m);
    }
    auto started = measure::remote::StartWorkerServer(opts->listen, service, tls);
    if (!started) throw UserError{started.error().message};
    std::unique_ptr<grpc::Server> server = std::move(started->server);
    const std::string shown_host = hp.host.find(':') != std::string::npos ? "[" + hp.host + "]" : hp.host;
    const std::string metrics_note =
        metrics ? fmt::format("; metrics on port {}", metrics->port()) : std::string();
    std::printf("autotune worker: serving %s on %s:%d%s%s\n", target.info.Text().c_str(), shown_host.c_str(),
                started->port, tls ? " (TLS, client certificates required)" : "", metrics_note.c_str());
    std::fflush(stdout);

    // The signal handler only sets the flag; this thread sees it and shuts down.
    while (!StopRequested().load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // Health says NOT_SERVING first, so balancers stop sending; then calls in flight get 30 s to
    // finish before they are cancelled (their jobs send the unanswered candidates elsewhere).
    if (auto* health = server->GetHealthCheckService()) health->Shutdown();
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(30));
    server->Wait();
    const auto c = service.counters().Snapshot();
    std::fprintf(stderr, "autotune worker: stopped after %lld batches (%lld candidates run, %.1f s busy)\n",
                 static_cast<long long>(c.batches), static_cast<long long>(c.candidates_run), c.busy_seconds);
    return 0;
  };
}

}  // namespace autotune::cli
