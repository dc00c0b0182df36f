#include "cli/remote_options.h"

#include <fmt/format.h>

#include "cli/cli_error.h"
#include "cli/number_checks.h"
#include "cli/secret_files.h"
#include "measure/remote/codegen_builder.h"
#include "measure/remote/remote_runner.h"

namespace autotune::cli {

void AddRemoteOptions(CLI::App& cmd, RemoteOptions& o) {
  cmd.add_option("--workers", o.workers,
                 "measure on `autotune worker` daemons: host:port,host:port, or dns:///name:port (every address "
                 "of the name: each batch is split over them) or ipv4:a:port,b:port")
      ->check(NotEmpty());  // why: an empty --workers would quietly tune on this machine
  cmd.add_option("--token-file", o.token_file, "file holding the token the workers require");
  cmd.add_option("--tls-cert", o.tls_cert, "TLS: the job's client certificate (PEM); with --tls-key and --tls-ca");
  cmd.add_option("--tls-key", o.tls_key, "TLS: the client certificate's private key (PEM)");
  cmd.add_option("--tls-ca", o.tls_ca, "TLS: CA certificate (PEM) that must have signed the workers' certificates");
}

RemoteMeasurement ConnectWorkers(const RemoteOptions& o, const std::string& target, const measure::MeasureConfig& config) {
  measure::remote::RemoteConfig rc;
  // A gRPC target with a scheme names its addresses itself (commas included: "ipv4:a:p,b:p").
  const bool one_target = o.workers.rfind("dns:", 0) == 0 || o.workers.rfind("ipv4:", 0) == 0 ||
                          o.workers.rfind("ipv6:", 0) == 0;
  if (one_target) rc.workers.push_back(o.workers);
  for (size_t start = 0; !one_target && start <= o.workers.size();) {
    size_t comma = o.workers.find(',', start);
    if (comma == std::string::npos) comma = o.workers.size();
    std::string w = o.workers.substr(start, comma - start);
    if (w.empty()) throw UserError{fmt::format("--workers '{}' has an empty entry", o.workers)};
    rc.workers.push_back(std::move(w));
    start = comma + 1;
  }
  if (target != "cpu" && target != "cuda" && target != "auto") {
    throw UserError{fmt::format("unknown target '{}' (expected cpu, cuda or auto)", target)};
  }
  rc.target = target == "cpu" ? tir::TargetKind::kCpu : tir::TargetKind::kCuda;
  rc.arch = target == "cpu" ? config.cpu_isa : config.cuda_arch;
  rc.settings = config;
  if (!o.token_file.empty()) rc.token = ReadTokenFile(o.token_file);
  rc.tls = ReadTlsFiles(o.tls_cert, o.tls_key, o.tls_ca, "--tls-cert, --tls-key and --tls-ca");
  auto runner = measure::remote::RemoteRunner::Connect(std::move(rc));
  if (!runner) throw UserError{runner.error().message};
  RemoteMeasurement m;
  m.target.kind = target == "cpu" ? tir::TargetKind::kCpu : tir::TargetKind::kCuda;
  m.target.info = (*runner)->target_info();
  const int addresses = (*runner)->addresses();
  fmt::print(stderr, "autotune: measuring on {} of {} worker{}{} ({})\n", (*runner)->healthy_workers(),
             (*runner)->total_workers(), (*runner)->total_workers() == 1 ? "" : "s",
             addresses > (*runner)->total_workers() ? fmt::format(", {} addresses", addresses) : "",
             m.target.info.Text());
  m.builder = std::make_unique<measure::remote::CodegenBuilder>(m.target.kind);
  m.runner = std::move(*runner);
  return m;
}

}  // namespace autotune::cli
