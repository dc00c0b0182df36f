#include "measure/thread_pinning.h"

#include <dlfcn.h>
#include <sched.h>

#include <atomic>
#include <vector>

namespace autotune::measure {
namespace {

struct PinContext {
  std::vector<int> cpus;
  int (*thread_num)();
  std::atomic<bool> failed{false};
};

void PinThisThread(void* data) {
  auto* ctx = static_cast<PinContext*>(data);
  const int cpu = ctx->cpus[static_cast<size_t>(ctx->thread_num()) % ctx->cpus.size()];
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) ctx->failed = true;
}

}  // namespace

bool PinOpenMpThreads(void* kernel_lib) {
  using Parallel = void (*)(void (*)(void*), void*, unsigned, unsigned);
  auto parallel = reinterpret_cast<Parallel>(dlsym(kernel_lib, "GOMP_parallel"));
  auto thread_num = reinterpret_cast<int (*)()>(dlsym(kernel_lib, "omp_get_thread_num"));
  auto max_threads = reinterpret_cast<int (*)()>(dlsym(kernel_lib, "omp_get_max_threads"));
  cpu_set_t allowed;
  if (!parallel || !thread_num || !max_threads || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return false;
  // A team smaller than the CPUs allowed (--threads) leaves the choice of CPUs to the scheduler: two
  // such jobs side by side would otherwise both take the first CPUs.
  if (max_threads() < CPU_COUNT(&allowed)) return false;
  PinContext ctx;
  ctx.thread_num = thread_num;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) ctx.cpus.push_back(c);
  }
  if (ctx.cpus.empty()) return false;
  parallel(&PinThisThread, &ctx, 0, 0);  // 0 threads: the runtime's default team, as the kernel's regions
  return !ctx.failed;
}

}  // namespace autotune::measure
