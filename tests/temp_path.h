// Paths for a test program's own files in the temporary directory. A path is named after the
// process (ctest runs the tests of a file in parallel processes) and is removed, with SQLite's -wal,
// -shm and -journal companions (or as a whole directory), when the program exits: a test run leaves
// nothing behind in $TMPDIR.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace autotune::testing {

class TempPaths {
 public:
  static TempPaths& Get() {
    static TempPaths paths;
    return paths;
  }
  std::string Make(const std::string& prefix, const std::string& name) {
    std::string path = ::testing::TempDir() + prefix + "_" + std::to_string(getpid()) + "_" + name;
    std::lock_guard<std::mutex> lock(mu_);
    paths_.push_back(path);
    return path;
  }
  ~TempPaths() {
    if (getpid() != owner_) return;  // a forked child that exits normally must not remove its parent's files
    std::error_code ec;
    for (const auto& p : paths_) {
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove_all(p + suffix, ec);
    }
  }

 private:
  TempPaths() = default;
  const pid_t owner_ = getpid();
  std::mutex mu_;
  std::vector<std::string> paths_;
};

// TempDir()/PREFIX_<pid>_NAME, removed at exit (whatever is there now stays: callers that need a
// fresh path remove it).
inline std::string TestTempPath(const std::string& prefix, const std::string& name) {
  return TempPaths::Get().Make(prefix, name);
}

}  // namespace autotune::testing
