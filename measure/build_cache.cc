#include "measure/build_cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace autotune::measure {
namespace {

namespace fs = std::filesystem;

constexpr uintmax_t kDefaultCacheMb = 2048;
constexpr auto kRecentUse = std::chrono::hours(1);

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

struct CacheFile {
  fs::path path;
  uintmax_t bytes = 0;
  fs::file_time_type used;
};

std::vector<CacheFile> ListFiles(const std::string& dir, uintmax_t& total) {
  std::vector<CacheFile> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code fe;
    if (!e.is_regular_file(fe)) continue;  // tmp-* directories are builds in flight
    CacheFile f{e.path(), e.file_size(fe), e.last_write_time(fe)};
    if (fe) continue;
    total += f.bytes;
    files.push_back(std::move(f));
  }
  return files;
}

}  // namespace

std::string DefaultCacheDir(std::string_view kind) {
  if (const std::string dir = Env("AUTOTUNE_CACHE_DIR"); !dir.empty()) return (fs::path(dir) / kind).string();
  if (const std::string xdg = Env("XDG_CACHE_HOME"); !xdg.empty()) return (fs::path(xdg) / "autotune" / kind).string();
  if (const std::string home = Env("HOME"); !home.empty()) {
    return (fs::path(home) / ".cache" / "autotune" / kind).string();
  }
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return (tmp / fmt::format("autotune-{}", getuid()) / kind).string();
}

uintmax_t CacheSizeLimitBytes() {
  const std::string mb = Env("AUTOTUNE_CACHE_MAX_MB");
  const bool digits = !mb.empty() && mb.size() <= 9 && mb.find_first_not_of("0123456789") == std::string::npos;
  const uintmax_t v = digits ? std::stoull(mb) : 0;
  return (v > 0 ? v : kDefaultCacheMb) * 1024 * 1024;
}

uintmax_t TrimCache(const std::string& dir, uintmax_t max_bytes) {
  uintmax_t total = 0;
  std::vector<CacheFile> files = ListFiles(dir, total);
  if (total <= max_bytes) return 0;
  std::sort(files.begin(), files.end(), [](const CacheFile& a, const CacheFile& b) { return a.used < b.used; });
  const uintmax_t goal = max_bytes / 5 * 4;
  const auto recent = fs::file_time_type::clock::now() - kRecentUse;
  uintmax_t removed = 0;
  for (const CacheFile& f : files) {
    if (total - removed <= goal || f.used > recent) break;
    std::error_code ec;
    if (fs::remove(f.path, ec)) removed += f.bytes;
  }
  return removed;
}

void TouchCacheEntry(const std::string& path) {
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
}

}  // namespace autotune::measure
