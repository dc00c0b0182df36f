// autotune targets: which targets this build and this machine can compile and measure for.
#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/output.h"
#include "measure/cpu_isa.h"
#include "measure/cuda_driver.h"
#include "measure/nvrtc_compiler.h"

namespace autotune::cli {

namespace {
bool CCompilerPresent() { return std::system("cc --version >/dev/null 2>&1") == 0; }

nlohmann::json CpuTarget(bool cc) {
  const std::string reason =
      fmt::format("system C compiler found; builds for this host ({})", measure::NativeCpuIsa().name);
  return {{"target", "cpu"}, {"compile", cc}, {"measure", cc}, {"reason", cc ? reason : "no `cc` on PATH"}};
}

// cpu:ISA compiles anywhere a C compiler is; it measures where the host runs that set.
nlohmann::json CpuIsaTarget(const measure::CpuIsa& isa, bool cc) {
  const bool runs = measure::HostRuns(isa);
  const std::string reason = runs ? fmt::format("this host runs {} code", isa.name)
                                  : fmt::format("compiles only: this host cannot run {} code", isa.name);
  return {{"target", "cpu:" + isa.name}, {"compile", cc}, {"measure", cc && runs},
          {"reason", cc ? reason : "no `cc` on PATH"}};
}

// cuda: compiling needs NVRTC; measuring needs the driver and a GPU too.
nlohmann::json CudaTarget() {
  auto nvrtc = measure::LoadNvrtc();
  auto device = measure::QueryCudaDeviceIsolated(0);
  std::string reason;
  if (!nvrtc) {
    reason = nvrtc.error().message;
  } else if (!device) {
    reason = fmt::format("NVRTC {} found (compiles with --arch); cannot measure: {}", (*nvrtc)->VersionText(),
                         device.error().message);
  } else {
    reason = fmt::format("NVRTC {}, {}", (*nvrtc)->VersionText(), device->Describe());
  }
  return {{"target", "cuda"}, {"compile", bool(nvrtc)}, {"measure", bool(nvrtc) && bool(device)}, {"reason", reason}};
}
}  // namespace

CommandRun AddTargetsCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("targets", "Show which targets can be compiled and measured here");
  auto json = std::make_shared<std::string>();
  AddJsonOption(*cmd, *json, "the targets");
  cmd->footer("Examples:\n  autotune targets\n  autotune targets --json   # compile/measure flags and the reason for each");
  return [json]() {
    const bool cc = CCompilerPresent();
    nlohmann::json out = nlohmann::json::array();
    out.push_back(CpuTarget(cc));
    out.push_back(CudaTarget());
    for (const measure::CpuIsa& isa : measure::KnownCpuIsas()) out.push_back(CpuIsaTarget(isa, cc));
    if (!json->empty()) {
      WriteOutput(*json, out.dump(2) + "\n", "the targets");
      return 0;
    }
    for (const auto& t : out) {
      const bool measure = t["measure"].get<bool>(), compile = t["compile"].get<bool>();
      fmt::print("{:<12} {:<14} {}\n", t["target"].get<std::string>(),
                 measure ? "measure" : compile ? "compile only" : "unavailable", t["reason"].get<std::string>());
    }
    return 0;
  };
}

}  // namespace autotune::cli
