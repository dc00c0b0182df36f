// SIGINT (Ctrl-C) and SIGTERM (timeout, job schedulers, systemd) ask a long-running command to stop
// gracefully: the first sets a flag the command polls and prints its message; another one a second
// or more later quits at once with status 130. `timeout` and `kill -INT -PGID` deliver one interrupt
// twice (to the process and to its group), which must not count as two.
#pragma once

#include <atomic>

namespace autotune::cli {

inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT, what shells report for Ctrl-C

// `message` must outlive the process (a string literal): the handler writes it as it is.
void InstallStopSignals(const char* message);
// Set by the first signal; cleared by InstallStopSignals.
const std::atomic<bool>& StopRequested();

}  // namespace autotune::cli
