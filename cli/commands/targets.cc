// autotune targets: which targets this build and this machine can compile and measure for.
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/command.h"

namespace autotune::cli {

namespace {

// The driver is loaded at run time, never linked: its absence is a fact to report, not a failure.
bool DriverLoadable() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return false;
  dlclose(h);
  return true;
}

bool CCompilerPresent() { return std::system("cc --version >/dev/null 2>&1") == 0; }

}  // namespace

CommandRun AddTargetsCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("targets", "Show which targets can be compiled and measured here");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print JSON instead of text");
  return [json]() {
#ifdef AUTOTUNE_HAVE_NVRTC
    const bool nvrtc = true;
#else
    const bool nvrtc = false;
#endif
    const bool cc = CCompilerPresent();
    const bool driver = DriverLoadable();
    nlohmann::json out = nlohmann::json::array();
    out.push_back({{"target", "cpu"}, {"available", cc}, {"reason", cc ? "system C compiler found" : "no `cc` on PATH"}});
    std::string cuda_reason = !nvrtc    ? "built without the CUDA toolkit (NVRTC not found at configure time)"
                              : !driver ? "no CUDA driver (libcuda.so.1) on this machine"
                                        : "the CUDA backend (codegen, NVRTC builder, Driver API runner) is not built yet";
    out.push_back({{"target", "cuda"}, {"available", false}, {"nvrtc", nvrtc}, {"driver", driver}, {"reason", cuda_reason}});
    if (*json) {
      fmt::print("{}\n", out.dump(2));
    } else {
      for (const auto& t : out) {
        fmt::print("{:<5} {:<12} {}\n", t["target"].get<std::string>(),
                   t["available"].get<bool>() ? "available" : "unavailable", t["reason"].get<std::string>());
      }
    }
    return 0;
  };
}

}  // namespace autotune::cli
