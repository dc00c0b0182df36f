// Runs the built autotune executable (AUTOTUNE_CLI, a compile definition of the test) as a user
// would, capturing its exit status, stdout and stderr. Shared by the CLI tests of every module.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace autotune::testing {

struct RunResult {
  int status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// The build's executable; where a bundle (scripts/bundle) took the tests to another machine, the
// `autotune` on PATH (.bundle/env.sh puts the bundle's there).
inline std::string CliPath() { return access(AUTOTUNE_CLI, X_OK) == 0 ? std::string(AUTOTUNE_CLI) : "autotune"; }

inline RunResult RunCli(const std::string& args) {
  // One file per call: ctest runs the tests of a file in parallel processes.
  static int calls = 0;
  const std::string err_file =
      ::testing::TempDir() + "autotune_cli_stderr_" + std::to_string(getpid()) + "_" + std::to_string(calls++) + ".txt";
  const std::string cmd = CliPath() + " " + args + " 2>" + err_file;
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream in(err_file);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::remove(err_file.c_str());
  return r;
}

// Lines of a text (newline characters).
inline int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace autotune::testing
