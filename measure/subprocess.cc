#include "measure/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace autotune::measure {
namespace {

using Clock = std::chrono::steady_clock;


}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& cwd, double timeout_s,
                         size_t max_output) {
  ProcessResult r;
  const auto t0 = Clock::now();
  const auto deadline = DeadlineAfter(t0, timeout_s);

  // O_CLOEXEC: other children started meanwhile (runner children, other compilers) must not hold our
  // pipe open, or we would not see end-of-file.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    r.output = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = -1;
  const int err = SpawnInOwnGroup(argv, &actions, true, &pid);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    r.output = "cannot start " + argv[0] + ": " + std::strerror(err);
    return r;
  }
  r.started = true;

  // Read until end-of-file (every process of the group closed the pipe) or the deadline.
  r.timed_out = ReadUntilClosed(fds[0], deadline, max_output, &r.output);
  close(fds[0]);

  // Reap it; a process that closed its output but keeps running still gets the time limit. The
  // kill goes to the group: the compiler driver's children (cc1, as, ld) too.
  ReapBy(pid, -pid, deadline, &r);
  if (r.timed_out) kill(-pid, SIGKILL);  // stragglers of the group, if the driver died first
  r.seconds = SecondsSince(t0);
  return r;
}

int SpawnInOwnGroup(const std::vector<std::string>& argv, const posix_spawn_file_actions_t* actions, bool search_path,
                    pid_t* pid) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  std::vector<std::string> env_text = {"LC_ALL=C"};
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "LC_ALL=", 7) != 0) env_text.push_back(*e);
  }
  std::vector<char*> env;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int err = search_path ? posix_spawnp(pid, args[0], actions, &attr, args.data(), env.data())
                              : posix_spawn(pid, args[0], actions, &attr, args.data(), env.data());
  posix_spawnattr_destroy(&attr);
  return err;
}

double CpuSeconds(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}


Clock::time_point DeadlineAfter(Clock::time_point t0, double seconds) {
  return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::optional<int> ReapBy(pid_t pid, pid_t kill_target, Clock::time_point deadline, ProcessResult* r) {
  ProcessResult unused;
  if (r == nullptr) r = &unused;
  if (r->timed_out) kill(kill_target, SIGKILL);
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t w = wait4(pid, &status, WNOHANG, &usage);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return std::nullopt;
    if (!r->timed_out && Clock::now() >= deadline) {
      r->timed_out = true;
      kill(kill_target, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (WIFEXITED(status)) r->exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r->term_signal = WTERMSIG(status);
  r->cpu_seconds = CpuSeconds(usage);
  return status;
}

bool SendFully(int fd, const void* data, size_t n) {
  const char* c = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadUntilClosed(int fd, Clock::time_point deadline, size_t max_output, std::string* out) {
  char buf[1 << 16];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return true;
    pollfd p{fd, POLLIN, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n <= 0) continue;  // timeout slice or EINTR: check the deadline again
    const ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    if (out->size() < max_output) out->append(buf, std::min<size_t>(got, max_output - out->size()));
  }
}

bool ReadFully(int fd, void* data, size_t n) {
  char* c = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t got = read(fd, c, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    c += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool WriteFully(int fd, const void* data, size_t n) {
  const char* c = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

std::string DescribeSignal(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* desc = strsignal(sig);
  return fmt::format("signal {} (SIG{}: {})", sig, abbrev ? abbrev : "?", desc ? desc : "?");
}

std::string DescribeWaitStatus(int status) {
  if (WIFSIGNALED(status)) return DescribeSignal(WTERMSIG(status));
  if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
  return "unknown status";
}

std::string TrimLog(const std::string& log, size_t max_bytes) {
  if (log.size() <= max_bytes) return log;
  size_t cut = log.rfind('\n', max_bytes);
  if (cut == std::string::npos || cut < max_bytes / 2) cut = max_bytes;
  return log.substr(0, cut) + fmt::format("\n... ({} more bytes of log)", log.size() - cut);
}

void ResetSignalsAndCoreLimit() {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
}

void CloseDescriptorsExcept(int keep) {
  auto close_range_of = [](unsigned lo, unsigned hi) {
    if (lo > hi) return;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, lo, hi, 0) == 0) return;
#endif
    const long max_fd = std::min<long>(sysconf(_SC_OPEN_MAX), 1 << 16);
    for (long fd = lo; fd <= std::min<long>(hi, max_fd); ++fd) close(static_cast<int>(fd));
  };
  if (keep < 3) {
    close_range_of(3, ~0U);
  } else {
    close_range_of(3, static_cast<unsigned>(keep) - 1);
    close_range_of(static_cast<unsigned>(keep) + 1, ~0U);
  }
}

ProcessResult RunForked(const std::function<void(int fd)>& body, double timeout_s, size_t max_output) {
  ForkLimits limits;
  limits.wall_s = timeout_s;
  limits.max_output = max_output;
  return RunForked(body, limits);
}

ProcessResult RunForked(const std::function<void(int fd)>& body, const ForkLimits& limits) {
  ProcessResult r;
  const auto t0 = Clock::now();
  const auto deadline = DeadlineAfter(t0, limits.wall_s);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    r.output = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    r.output = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    // Its own process group: a Ctrl-C at the terminal is the parent's to handle (it finishes the
    // work in flight), not a reason for this child to die mid-compile.
    setpgid(0, 0);
    // A crash must end the child with its signal, quietly; and no orphan if the parent dies.
    ResetSignalsAndCoreLimit();
    LimitThisProcess(limits.cpu_s, limits.nice);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    CloseDescriptorsExcept(fds[1]);
    body(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  r.started = true;

  r.timed_out = ReadUntilClosed(fds[0], deadline, limits.max_output, &r.output);
  close(fds[0]);
  ReapBy(pid, pid, deadline, &r);  // one that closed its output but kept running gets the limit too
  NoteCpuLimit(r, limits.cpu_s);
  r.seconds = SecondsSince(t0);
  return r;
}

void LimitThisProcess(double cpu_s, int nice) {
  if (cpu_s > 0) {
    const auto soft = static_cast<rlim_t>(std::ceil(cpu_s));
    const rlimit cpu{soft, soft + 1};
    setrlimit(RLIMIT_CPU, &cpu);
  }
  if (nice > 0) setpriority(PRIO_PROCESS, 0, std::min(19, getpriority(PRIO_PROCESS, 0) + nice));
}

void NoteCpuLimit(ProcessResult& r, double cpu_s) {
  // A SIGKILL of ours (the wall limit) is already timed_out; one past the CPU limit is the hard limit's.
  if (cpu_s <= 0 || r.timed_out) return;
  if (r.term_signal == SIGXCPU || (r.term_signal == SIGKILL && r.cpu_seconds >= cpu_s)) {
    r.timed_out = true;
    r.term_signal = 0;
  }
}

}  // namespace autotune::measure
