#include "cli/stop_signal.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace autotune::cli {

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int64_t> g_first_ms{0};
std::atomic<const char*> g_message{""};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int64_t>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

int64_t MonotonicMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void OnStopSignal(int) {
  if (g_stop.load()) {
    if (MonotonicMs() - g_first_ms.load() >= 1000) _exit(kExitInterrupted);
    return;
  }
  g_first_ms.store(MonotonicMs());
  g_stop.store(true);
  const char* msg = g_message.load();
  ssize_t ignored = write(STDERR_FILENO, msg, std::strlen(msg));
  (void)ignored;
}

}  // namespace

void InstallStopSignals(const char* message) {
  g_stop.store(false);
  g_message.store(message);
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and waits in flight go on; the flag is polled
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

const std::atomic<bool>& StopRequested() { return g_stop; }

}  // namespace autotune::cli
