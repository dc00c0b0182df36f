// PinOpenMpThreads: after it, every thread of a kernel library's parallel regions is bound to one
// CPU, a different one for each thread (as many as the process may use).
#include "measure/thread_pinning.h"

#include <dlfcn.h>
#include <sched.h>

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "measure/c_compile.h"
#include "tests/temp_path.h"

namespace autotune::measure {
namespace {

// For each thread of a parallel region: how many CPUs it may run on, and the first of them.
constexpr const char* kProbe = R"(
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
int probe(int* counts, int* firsts, int max) {
  int n = 0;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    cpu_set_t s;
    sched_getaffinity(0, sizeof s, &s);
    if (t < max) {
      counts[t] = CPU_COUNT(&s);
      for (int c = 0; c < CPU_SETSIZE; ++c) if (CPU_ISSET(c, &s)) { firsts[t] = c; break; }
    }
#pragma omp single
    n = omp_get_num_threads();
  }
  return n;
}
)";

TEST(ThreadPinning, EachThreadOfTheKernelsRegionsGetsItsOwnCpu) {
  const CCompiler cc("cc", NativeCpuIsa(), {}, testing::TestTempPath("thread_pinning", "cache"), 60);
  const auto out = cc.Compile(kProbe);
  ASSERT_TRUE(out.ok) << out.error;
  void* lib = dlopen(out.artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto probe = reinterpret_cast<int (*)(int*, int*, int)>(dlsym(lib, "probe"));
  ASSERT_NE(probe, nullptr);
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const int cpus = CPU_COUNT(&allowed);

  std::vector<int> counts(256, 0), firsts(256, -1);
  const int before = probe(counts.data(), firsts.data(), 256);
  ASSERT_GE(before, 1);
  EXPECT_EQ(counts[0], cpus);  // unpinned: every allowed CPU

  ASSERT_TRUE(PinOpenMpThreads(lib));
  const int threads = probe(counts.data(), firsts.data(), 256);
  EXPECT_EQ(threads, before);
  std::set<int> used;
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(counts[t], 1) << "thread " << t;
    EXPECT_TRUE(CPU_ISSET(firsts[t], &allowed)) << "thread " << t;
    used.insert(firsts[t]);
  }
  EXPECT_EQ(static_cast<int>(used.size()), std::min(threads, cpus));
  sched_setaffinity(0, sizeof allowed, &allowed);  // this thread (thread 0 of the team) as it was
}

TEST(ThreadPinning, AKernelOnFewerThreadsThanCpusIsLeftToTheScheduler) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "one CPU: every team covers it";
  const CCompiler cc("cc", NativeCpuIsa(), {}, testing::TestTempPath("thread_pinning", "cache_few"), 60);
  const auto out = cc.Compile(kProbe);
  ASSERT_TRUE(out.ok) << out.error;
  void* lib = dlopen(out.artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto set_threads = reinterpret_cast<void (*)(int)>(dlsym(lib, "omp_set_num_threads"));
  ASSERT_NE(set_threads, nullptr);
  set_threads(1);
  EXPECT_FALSE(PinOpenMpThreads(lib));
  std::vector<int> counts(4, 0), firsts(4, -1);
  auto probe = reinterpret_cast<int (*)(int*, int*, int)>(dlsym(lib, "probe"));
  ASSERT_EQ(probe(counts.data(), firsts.data(), 4), 1);
  EXPECT_EQ(counts[0], CPU_COUNT(&allowed));
}

}  // namespace
}  // namespace autotune::measure
