// Compiled CUDA modules kept by hash in a cache directory (measure/build_cache.h): KEY.cubin with
// NVRTC's log (KEY.log, which carries the register and spill figures) and the source (KEY.cu)
// beside it. The key covers NVRTC's version, its options and the source, so the tuner's builder and
// the lookup library's runtime find each other's cubins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace autotune::measure {

struct Nvrtc;

// What besides the source decides a cubin: NVRTC's version and the options, one a line.
std::string CubinIdentity(const Nvrtc& nvrtc, const std::vector<std::string>& options);
std::string CubinKey(const std::string& identity, const std::string& source);

struct CachedCubin {
  std::string path;  // KEY.cubin
  std::string log;
  int64_t bytes = 0;
};
// The cubin of `key` in `dir`, marked as just used; nothing when it or its log is missing (a
// cubin without its log is compiled again).
std::optional<CachedCubin> FindCachedCubin(const std::string& dir, const std::string& key);
// Puts a compiled cubin into `dir`: the log and the source first, each file written atomically, so a
// cubin in the cache always has its log. False when a file cannot be written.
bool StoreCubin(const std::string& dir, const std::string& key, const std::string& source, const std::string& log,
                const std::string& cubin);

}  // namespace autotune::measure
