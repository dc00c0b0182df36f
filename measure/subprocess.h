// Runs a command (e.g. the C compiler) with a time limit and captures its output. The command and
// everything it starts run in their own process group, so a timeout kills the whole tree. It runs
// with LC_ALL=C, so that logs are plain ASCII whatever the user's locale.
#pragma once

#include <spawn.h>
#include <sys/resource.h>

#include <chrono>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "support/stopwatch.h"

namespace autotune::measure {

struct ProcessResult {
  bool started = false;    // false: the program could not be started (see output)
  bool timed_out = false;  // killed at the time limit (wall or, for RunForked, CPU)
  int exit_code = -1;      // valid when it exited normally
  int term_signal = 0;     // the signal that ended it, if any
  std::string output;      // stdout and stderr together, at most max_output bytes
  double seconds = 0;
  double cpu_seconds = 0;  // user + system CPU time of the child and of the children it waited for
  bool ok() const { return started && !timed_out && term_signal == 0 && exit_code == 0; }
};

// argv[0] is looked up in PATH; `cwd` ("" = ours) is the working directory of the command.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& cwd, double timeout_s,
                         size_t max_output = 64 * 1024);

// Runs `body` in a forked child process with a time limit: for work that cannot be interrupted
// in-thread (an NVRTC compile) or that may crash or hang (loading the GPU driver). `body` writes its
// result to the descriptor it is given; when it returns, the child ends with _exit(0) (no atexit
// handlers, no destructors of the parent's objects). `output` is what it wrote.
//
// The child closes every descriptor above 2 but its own, restores default signal handlers and an
// empty signal mask, makes no core file, and is killed when the thread that forked it ends. The
// parent may be multithreaded: the child must only call code that needs no lock another thread
// could have held at the fork (glibc's malloc and dynamic loader are fine; do not use iostreams or
// a mutex of the parent's).
ProcessResult RunForked(const std::function<void(int fd)>& body, double timeout_s,
                        size_t max_output = size_t{256} << 20);

// What a forked child may use. A compile's limit is better counted in CPU time than in wall time: on
// a machine busy with other work (the search, other compiles) a compile's wall time grows with the
// load while its CPU time does not, and a wall-time limit would fail candidates for the load.
struct ForkLimits {
  double wall_s = 60;  // killed past this wall time
  double cpu_s = 0;    // killed past this CPU time (RLIMIT_CPU: whole seconds, rounded up); 0: no limit
  int nice = 0;        // added to the child's nice value: > 0 leaves the CPU to the parent's threads first
  size_t max_output = size_t{256} << 20;
};
ProcessResult RunForked(const std::function<void(int fd)>& body, const ForkLimits& limits);

// In a child process: limits its CPU time to `cpu_s` (0: no limit; RLIMIT_CPU, whole seconds rounded
// up: SIGXCPU there, which ends it with the default handler, SIGKILL a second later) and adds `nice`
// to its nice value (at most 19).
void LimitThisProcess(double cpu_s, int nice);
// Marks `r` timed out when the child was ended by the CPU limit LimitThisProcess set (its SIGXCPU,
// or the SIGKILL of the hard limit past that much CPU time).
void NoteCpuLimit(ProcessResult& r, double cpu_s);

// Writes all of `data` (retrying short writes and EINTR); false on an error (e.g. the reader is gone).
bool WriteFully(int fd, const void* data, size_t n);
// Reads exactly n bytes (retrying short reads and EINTR); false at end-of-file or on an error.
bool ReadFully(int fd, void* data, size_t n);
// WriteFully for a socket, with send()'s MSG_NOSIGNAL: a peer that is gone is an error here, not a
// SIGPIPE that kills this process.
bool SendFully(int fd, const void* data, size_t n);

// posix_spawn (posix_spawnp when `search_path`) of argv with the descriptors `actions` sets up, in
// a process group of its own (the terminal's Ctrl-C goes to the job, not to its children), default
// signal handlers, an empty signal mask and the C locale (plain ASCII logs whatever the user's
// locale is). 0 or the errno value.
int SpawnInOwnGroup(const std::vector<std::string>& argv, const posix_spawn_file_actions_t* actions, bool search_path,
                    pid_t* pid);

// User + system CPU seconds of a rusage (of a reaped child, or of this process).
double CpuSeconds(const rusage& u);
// `seconds` after `t0`.
std::chrono::steady_clock::time_point DeadlineAfter(std::chrono::steady_clock::time_point t0, double seconds);

// Waits for the child `pid` to end, polling. Past `deadline` it sends SIGKILL to `kill_target` (the
// pid, or -pid for the child's process group) and sets r->timed_out; with r->timed_out already set it
// does so at once. Fills r's exit_code, term_signal and cpu_seconds (the child's and those of the
// children it waited for); `r` may be null when only the status matters. Returns the wait status,
// or nullopt when `pid` was no child of ours.
std::optional<int> ReapBy(pid_t pid, pid_t kill_target, std::chrono::steady_clock::time_point deadline,
                          ProcessResult* r = nullptr);

// Reads `fd` until end-of-file (every writer closed it) or `deadline`, appending at most
// `max_output` bytes to `out` (past that it keeps reading, so the writer is never blocked, and drops
// the bytes). Returns true when the deadline passed first.
bool ReadUntilClosed(int fd, std::chrono::steady_clock::time_point deadline, size_t max_output, std::string* out);

// "signal 11 (SIGSEGV: Segmentation fault)".
std::string DescribeSignal(int sig);
// How a process with wait status `status` ended: "exit code 3", or as DescribeSignal.
std::string DescribeWaitStatus(int status);

// The first lines of a compiler log, at most about `max_bytes` (the first error is the informative one).
std::string TrimLog(const std::string& log, size_t max_bytes = 4000);

// Closes every descriptor above 2 except `keep` (-1: none), in a child process after fork.
void CloseDescriptorsExcept(int keep);

// In a child process after fork: every signal to its default action and none blocked, and no core
// file, so that a crash ends the child with its signal, quietly.
void ResetSignalsAndCoreLimit();

}  // namespace autotune::measure
