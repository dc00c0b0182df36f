#include "measure/host_info.h"

#include <sys/utsname.h>

#include <fstream>

#include "measure/subprocess.h"

namespace autotune::measure {

std::string HostCpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "unknown cpu" : line.substr(start);
  }
  return "unknown cpu";
}

std::string HostMachine() {
  utsname u{};
  return uname(&u) == 0 ? u.machine : "unknown";
}

std::string CCompilerVersion(const std::string& cc) {
  ProcessResult version = RunProcess({cc, "--version"}, "", 30);
  if (!version.ok()) return "";
  return version.output.substr(0, version.output.find('\n'));
}

}  // namespace autotune::measure
