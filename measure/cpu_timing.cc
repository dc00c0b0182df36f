#include "measure/cpu_timing.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace autotune::measure {

namespace {
volatile uint64_t flush_sink;
}  // namespace

int64_t LastLevelCacheBytes() {
  int64_t best = 0;
  for (int i = 0; i < 16; ++i) {
    std::ifstream f(fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/size", i));
    if (!f) continue;
    std::string s;
    f >> s;
    if (s.empty()) continue;
    int64_t v = std::atoll(s.c_str());
    const char unit = s.back();
    if (unit == 'K') v <<= 10;
    if (unit == 'M') v <<= 20;
    best = std::max(best, v);
  }
  return best > 0 ? best : int64_t{32} << 20;
}

AlignedFloats MakeFlushBuffer(int64_t bytes) {
  if (bytes <= 0) bytes = std::max<int64_t>(LastLevelCacheBytes() * 3 / 2, int64_t{8} << 20);
  AlignedFloats buf((bytes + 3) / 4);
  std::fill(buf.data(), buf.data() + buf.size(), 1.0f);
  return buf;
}

void FlushCaches(const char* buf, int64_t bytes) {
  uint64_t s = 0;
  for (int64_t i = 0; i < bytes; i += 64) s += static_cast<unsigned char>(buf[i]);
  flush_sink = s;
}

}  // namespace autotune::measure
