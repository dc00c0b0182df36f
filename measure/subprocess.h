// Runs a command (e.g. the C compiler) with a time limit and captures its output. The command and
// everything it starts run in their own process group, so a timeout kills the whole tree. It runs
// with LC_ALL=C, so that logs are plain ASCII whatever the user's locale.
#pragma once

#include <string>
#include <vector>

namespace autotune::measure {

struct ProcessResult {
  bool started = false;    // false: the program could not be started (see output)
  bool timed_out = false;  // killed at the time limit
  int exit_code = -1;      // valid when it exited normally
  int term_signal = 0;     // the signal that ended it, if any
  std::string output;      // stdout and stderr together, at most max_output bytes
  double seconds = 0;
  bool ok() const { return started && !timed_out && term_signal == 0 && exit_code == 0; }
};

// argv[0] is looked up in PATH; `cwd` ("" = ours) is the working directory of the command.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& cwd, double timeout_s,
                         size_t max_output = 64 * 1024);

}  // namespace autotune::measure
