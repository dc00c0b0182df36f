// The autotune version (CMake's project version), stored with every tuning record.
#pragma once

namespace autotune {

#ifndef AUTOTUNE_VERSION_STRING
#error "AUTOTUNE_VERSION_STRING is defined by the top-level CMakeLists.txt"
#endif
inline constexpr const char* kVersion = AUTOTUNE_VERSION_STRING;

}  // namespace autotune
