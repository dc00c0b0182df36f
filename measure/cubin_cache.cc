#include "measure/cubin_cache.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "measure/build_cache.h"
#include "measure/nvrtc_compiler.h"
#include "measure/subprocess.h"
#include "support/sha256.h"

namespace autotune::measure {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Writes `text` to `dir/name` through a temporary file and a rename (atomic on one file system).
bool WriteAtomically(const fs::path& dir, const std::string& name, const std::string& text) {
  std::string tmpl = (dir / ("." + name + ".XXXXXX")).string();
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) return false;
  const bool written = WriteFully(fd, text.data(), text.size());
  close(fd);
  std::error_code ec;
  if (written) fs::rename(tmpl, dir / name, ec);
  if (!written || ec) {
    fs::remove(tmpl, ec);
    return false;
  }
  return true;
}

}  // namespace

std::string CubinIdentity(const Nvrtc& nvrtc, const std::vector<std::string>& options) {
  std::string identity = "nvrtc " + nvrtc.VersionText() + "\n";
  for (const auto& o : options) identity += o + "\n";
  return identity;
}

std::string CubinKey(const std::string& identity, const std::string& source) {
  return Sha256Hex(identity + "\n" + source);
}

std::optional<CachedCubin> FindCachedCubin(const std::string& dir, const std::string& key) {
  const fs::path cubin = fs::path(dir) / (key + ".cubin");
  std::error_code ec;
  if (!fs::exists(cubin, ec)) return std::nullopt;
  const auto size = fs::file_size(cubin, ec);
  auto log = ReadFile(fs::path(dir) / (key + ".log"));
  if (ec || size == 0 || !log || log->empty()) return std::nullopt;
  TouchCacheEntry(cubin.string());
  return CachedCubin{cubin.string(), std::move(*log), static_cast<int64_t>(size)};
}

bool StoreCubin(const std::string& dir, const std::string& key, const std::string& source, const std::string& log,
                const std::string& cubin) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  return WriteAtomically(dir, key + ".log", log) && WriteAtomically(dir, key + ".cu", source) &&
         WriteAtomically(dir, key + ".cubin", cubin);
}

}  // namespace autotune::measure
