#include "measure/host_load.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/parallel_for.h"

namespace autotune::measure {
namespace {

struct CpuTimes {
  double busy = 0, total = 0;
};

// The first line of /proc/stat: jiffies of all CPUs in user, nice, system, idle, iowait, irq, ...
std::optional<CpuTimes> ReadCpuTimes() {
  std::ifstream f("/proc/stat");
  std::string line;
  if (!f || !std::getline(f, line) || line.rfind("cpu ", 0) != 0) return std::nullopt;
  std::istringstream in(line.substr(4));
  CpuTimes t;
  double v = 0;
  for (int i = 0; in >> v; ++i) {
    if (i >= 8) break;  // guest times are already counted in user and nice
    t.total += v;
    if (i != 3 && i != 4) t.busy += v;  // idle and iowait
  }
  return t.total > 0 ? std::optional<CpuTimes>(t) : std::nullopt;
}

int OnlineCores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

}  // namespace

std::optional<double> BusyCores(int window_ms) {
  const auto a = ReadCpuTimes();
  std::this_thread::sleep_for(std::chrono::milliseconds(window_ms));
  const auto b = ReadCpuTimes();
  if (!a || !b || b->total <= a->total) return std::nullopt;
  return (b->busy - a->busy) / (b->total - a->total) * OnlineCores();
}

std::optional<std::string> BusyHostWarning(int kernel_threads) {
  const int usable = UsableCores();
  const int threads = kernel_threads > 0 ? std::min(kernel_threads, usable) : usable;
  const auto busy = BusyCores();
  // Half a core of slack: daemons and this process's own start-up.
  if (!busy || *busy <= usable - threads + 0.5) return std::nullopt;
  return fmt::format(
      "autotune: warning: other processes keep {:.1f} of this machine's cores busy and the kernels use {} of {}: "
      "CPU timings will be noisy",
      *busy, threads, usable);
}

}  // namespace autotune::measure
