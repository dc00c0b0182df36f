// Reading a file that a user named: checked before a byte is read, so a FIFO never blocks, a device
// is never read as data and a huge file never fills memory. Errors say why in words: "no such
// file", "permission denied", "is a directory", "not a regular file (a FIFO)", "too large (... over the
// limit of ...)".
#pragma once

#include <cstdint>
#include <string>

#include "support/result.h"

namespace autotune {

// Why `path` cannot be read as a regular file of at most `max_bytes`, or nothing.
Result<void> CheckInputFile(const std::string& path, int64_t max_bytes);
// The whole file, after CheckInputFile.
Result<std::string> ReadInputFile(const std::string& path, int64_t max_bytes);

inline constexpr int64_t kMiB = int64_t{1} << 20;

}  // namespace autotune
