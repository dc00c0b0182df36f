#include "cli/remote_options.h"

#include <fmt/format.h>

#include "cli/cli_error.h"
#include "cli/token_file.h"
#include "measure/remote/codegen_builder.h"
#include "measure/remote/remote_runner.h"

namespace autotune::cli {

void AddRemoteOptions(CLI::App& cmd, RemoteOptions& o) {
  cmd.add_option("--workers", o.workers,
                 "measure on `autotune worker` daemons: host:port,host:port or dns:///name:port (every address "
                 "of the name, round-robin)");
  cmd.add_option("--token-file", o.token_file, "file holding the token the workers require");
}

RemoteMeasurement ConnectWorkers(const RemoteOptions& o, const std::string& target, const measure::MeasureConfig& config) {
  measure::remote::RemoteConfig rc;
  for (size_t start = 0; start <= o.workers.size();) {
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
  rc.arch = config.cuda_arch;
  rc.settings = config;
  if (!o.token_file.empty()) rc.token = ReadTokenFile(o.token_file);
  auto runner = measure::remote::RemoteRunner::Connect(std::move(rc));
  if (!runner) throw UserError{runner.error().message};
  RemoteMeasurement m;
  m.target.kind = target == "cpu" ? tir::TargetKind::kCpu : tir::TargetKind::kCuda;
  m.target.info = (*runner)->target_info();
  fmt::print(stderr, "autotune: measuring on {} of {} worker{} ({})\n", (*runner)->healthy_workers(),
             (*runner)->total_workers(), (*runner)->total_workers() == 1 ? "" : "s", m.target.info.Text());
  m.builder = std::make_unique<measure::remote::CodegenBuilder>(m.target.kind);
  m.runner = std::move(*runner);
  return m;
}

}  // namespace autotune::cli
