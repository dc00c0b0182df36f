// Seconds on the steady clock: how long a stage took, for reports and progress lines.
#pragma once

#include <chrono>

namespace autotune {

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace autotune
