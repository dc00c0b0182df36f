// `autotune worker` as a child process of a test: started on 127.0.0.1:0 (or a given port), its
// ready line read for the port, its stderr (one line per batch) kept in a file, stopped with a signal.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

namespace autotune::testing {

// Runs AUTOTUNE_CLI with `args` in the background, stderr into `stderr_path` (appended). With
// `first_line`, stdout is a pipe whose first line is read (waiting for it) and returned; without,
// stdout goes to `stderr_path` too. -1 when it could not start.
inline pid_t StartCli(const std::vector<std::string>& args, const std::string& stderr_path, std::string* first_line) {
  int fds[2];
  if (first_line && pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* err = stderr_path.empty() ? nullptr : std::fopen(stderr_path.c_str(), "a");
    if (err) dup2(fileno(err), STDERR_FILENO);
    if (first_line) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
    } else if (err) {
      dup2(fileno(err), STDOUT_FILENO);
    }
    std::vector<char*> argv;
    std::string cli = AUTOTUNE_CLI;
    argv.push_back(cli.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (!first_line) return pid;
  close(fds[1]);
  FILE* out = fdopen(fds[0], "r");
  char buf[1024];
  first_line->clear();
  if (out && fgets(buf, sizeof buf, out)) *first_line = buf;
  if (out) fclose(out);
  return pid;
}

struct WorkerProcess {
  pid_t pid = -1;
  int port = 0;
  std::string log;  // its stderr

  // Starts a cpu worker on `port` (0: any free one) with extra flags.
  bool Start(const std::string& log_path, int want_port = 0, const std::vector<std::string>& extra = {}) {
    log = log_path;
    std::vector<std::string> args = {"worker", "--target", "cpu", "--listen", "127.0.0.1:" + std::to_string(want_port),
                                     "--repeats", "1", "--min-repeat-ms", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::string line;
    pid = StartCli(args, log, &line);
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"(on 127\.0\.0\.1:(\d+))"))) port = std::stoi(m[1]);
    return pid > 0 && port > 0;
  }
  std::string Address() const { return "127.0.0.1:" + std::to_string(port); }
  // Batches it logged so far.
  int Batches() const {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    int n = 0;
    for (size_t at = 0; (at = text.find(" candidates=", at)) != std::string::npos; ++at) ++n;
    return n;
  }
  void Kill(int sig = SIGKILL) {
    if (pid <= 0) return;
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
  }
  ~WorkerProcess() { Kill(); }
};

}  // namespace autotune::testing
