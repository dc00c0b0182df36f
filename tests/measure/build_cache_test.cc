#include "measure/build_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace autotune::measure {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "build-cache-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A file of `bytes` bytes last used `age` ago.
void MakeFile(const fs::path& p, size_t bytes, std::chrono::minutes age) {
  std::ofstream(p) << std::string(bytes, 'x');
  fs::last_write_time(p, fs::file_time_type::clock::now() - age);
}

TEST(BuildCache, TheDirectoryFollowsTheEnvironment) {
  ScopedEnv dir("AUTOTUNE_CACHE_DIR", nullptr), xdg("XDG_CACHE_HOME", nullptr), home("HOME", "/home/u");
  EXPECT_EQ(DefaultCacheDir("cuda"), "/home/u/.cache/autotune/cuda");
  {
    ScopedEnv x("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(DefaultCacheDir("c"), "/xdg/autotune/c");
    ScopedEnv a("AUTOTUNE_CACHE_DIR", "/mine");
    EXPECT_EQ(DefaultCacheDir("c"), "/mine/c") << "the explicit directory wins";
  }
  ScopedEnv no_home("HOME", nullptr);
  EXPECT_EQ(DefaultCacheDir("c").rfind(fs::temp_directory_path().string(), 0), 0u) << DefaultCacheDir("c");
}

TEST(BuildCache, TheCapComesFromTheEnvironmentOrIsTwoGigabytes) {
  {
    ScopedEnv cap("AUTOTUNE_CACHE_MAX_MB", nullptr);
    EXPECT_EQ(CacheSizeLimitBytes(), 2048ull << 20);
  }
  {
    ScopedEnv cap("AUTOTUNE_CACHE_MAX_MB", "10");
    EXPECT_EQ(CacheSizeLimitBytes(), 10ull << 20);
  }
  for (const char* bad : {"", "0", "-5", "12x", "lots"}) {
    ScopedEnv cap("AUTOTUNE_CACHE_MAX_MB", bad);
    EXPECT_EQ(CacheSizeLimitBytes(), 2048ull << 20) << "'" << bad << "' is not a size";
  }
}

TEST(BuildCache, TrimmingRemovesTheLeastRecentlyUsedDownToFourFifthsOfTheCap) {
  TempDir d;
  using std::chrono::minutes;
  MakeFile(d.path() / "oldest.so", 400, minutes(600));
  MakeFile(d.path() / "old.so", 400, minutes(300));
  MakeFile(d.path() / "newer.so", 400, minutes(120));
  MakeFile(d.path() / "fresh.so", 400, minutes(1));
  fs::create_directory(d.path() / "tmp-build");  // a build in flight is never touched
  MakeFile(d.path() / "tmp-build" / "kernel.c", 4000, minutes(900));

  EXPECT_EQ(TrimCache(d.path().string(), 2000), 0u) << "1600 bytes are under the cap";
  EXPECT_EQ(TrimCache(d.path().string(), 1000), 800u);  // down to 800 = 4/5 of 1000
  EXPECT_FALSE(fs::exists(d.path() / "oldest.so"));
  EXPECT_FALSE(fs::exists(d.path() / "old.so"));
  EXPECT_TRUE(fs::exists(d.path() / "newer.so"));
  EXPECT_TRUE(fs::exists(d.path() / "fresh.so"));
  EXPECT_TRUE(fs::exists(d.path() / "tmp-build" / "kernel.c"));
}

TEST(BuildCache, FilesUsedInTheLastHourStayOverTheCap) {
  TempDir d;
  MakeFile(d.path() / "a.cubin", 500, std::chrono::minutes(5));
  MakeFile(d.path() / "b.cubin", 500, std::chrono::minutes(2));
  EXPECT_EQ(TrimCache(d.path().string(), 100), 0u);
  EXPECT_TRUE(fs::exists(d.path() / "a.cubin"));
}

TEST(BuildCache, ATouchedEntryCountsAsJustUsed) {
  TempDir d;
  MakeFile(d.path() / "hit.so", 600, std::chrono::minutes(600));
  MakeFile(d.path() / "miss.so", 600, std::chrono::minutes(300));
  TouchCacheEntry((d.path() / "hit.so").string());
  TrimCache(d.path().string(), 1000);
  EXPECT_TRUE(fs::exists(d.path() / "hit.so"));
  EXPECT_FALSE(fs::exists(d.path() / "miss.so"));
}

TEST(BuildCache, AMissingDirectoryIsNothingToTrim) {
  EXPECT_EQ(TrimCache("/nonexistent/autotune-cache", 1), 0u);
}

}  // namespace
}  // namespace autotune::measure
