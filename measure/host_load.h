// Whether other work on this machine would disturb CPU timings: measured from /proc/stat over a
// short window (the load average lags by a minute, and right after a build it still counts the build).
#pragma once

#include <optional>
#include <string>

namespace autotune::measure {

// The cores other processes kept busy during a `window_ms` sample (this process sleeps through it),
// or nullopt where /proc/stat cannot be read.
std::optional<double> BusyCores(int window_ms = 200);

// A one-line warning when the busy cores exceed those a cpu kernel of `kernel_threads` threads
// (0: every core this process may use) leaves free, else nullopt.
std::optional<std::string> BusyHostWarning(int kernel_threads);

}  // namespace autotune::measure
