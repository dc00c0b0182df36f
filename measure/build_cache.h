// The directory where builders keep compiled candidates by hash, so that a schedule built once (in
// this job, an earlier one or another running beside it) is not compiled again; and its size cap.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace autotune::measure {

// $AUTOTUNE_CACHE_DIR/<kind>, else $XDG_CACHE_HOME/autotune/<kind>, else ~/.cache/autotune/<kind>,
// else (no home) <temp dir>/autotune-<uid>/<kind>. `kind`: "c" or "cuda".
std::string DefaultCacheDir(std::string_view kind);

// The cap on a cache directory's size: $AUTOTUNE_CACHE_MAX_MB megabytes, else 2048.
uintmax_t CacheSizeLimitBytes();

// Brings `dir` under `max_bytes` by removing its least recently used files, oldest first, down to
// 80% of the cap. Files used in the last hour stay (another job may be about to load them), so the
// cap can be exceeded for a while. Returns the bytes removed; errors leave files in place.
uintmax_t TrimCache(const std::string& dir, uintmax_t max_bytes);

// Marks a cached file as just used (its modification time), so that trimming keeps it longer.
void TouchCacheEntry(const std::string& path);

}  // namespace autotune::measure
