// What the fuzz targets share: a property check that stops the fuzzer with the failed condition
// (libFuzzer then saves the input that broke it), and splitting an input into text fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define FUZZ_CHECK(cond)                                                                   \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond);   \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)

namespace autotune::fuzz {

// The input as `n` fields separated by newlines; the last takes the rest (newlines included).
inline std::vector<std::string> Fields(const uint8_t* data, size_t size, size_t n) {
  std::vector<std::string> out(n);
  const std::string text(reinterpret_cast<const char*>(data), size);
  size_t at = 0;
  for (size_t i = 0; i + 1 < n && at <= text.size(); ++i) {
    const size_t end = text.find('\n', at);
    out[i] = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? text.size() + 1 : end + 1;
  }
  if (at <= text.size()) out[n - 1] = text.substr(at);
  return out;
}

}  // namespace autotune::fuzz
