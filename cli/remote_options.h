// `tune --workers`: measuring on remote `autotune worker` daemons instead of this machine. The job
// generates code here and the workers compile, run, check and time it; records are stored under the
// workers' device.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/measure_options.h"

namespace autotune::cli {

struct RemoteOptions {
  std::string workers;     // "host:port,host:port" or "dns:///name:port"; "" = measure here
  std::string token_file;  // the shared token the workers require
  std::string tls_cert, tls_key, tls_ca;  // mutual TLS: the job's certificate and key, the workers' CA
};

void AddRemoteOptions(CLI::App& cmd, RemoteOptions& o);

struct RemoteMeasurement {
  MeasureTarget target;
  std::unique_ptr<measure::Builder> builder;
  std::unique_ptr<measure::Runner> runner;
};

// Connects to the workers for `target` ("cpu", "cuda"; "auto" means cuda); UserError naming each
// worker's problem when none is usable.
RemoteMeasurement ConnectWorkers(const RemoteOptions& o, const std::string& target, const measure::MeasureConfig& config);

}  // namespace autotune::cli
