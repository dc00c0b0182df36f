// The one random engine of autotune: xoshiro256** seeded through splitmix64, with our own
// distributions (std::uniform_*_distribution differs between standard libraries, and the same seed
// must give the same candidates everywhere). Fork() derives independent engines for threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace autotune {

class Random {
 public:
  explicit Random(uint64_t seed = 0x5eed);
  uint64_t Next();
  // Uniform integer in [lo, hi] (inclusive).
  int64_t UniformInt(int64_t lo, int64_t hi);
  // Uniform double in [0, 1).
  double UniformReal();
  // Index drawn with the given non-negative weights (uniform when all are zero).
  int Categorical(const std::vector<double>& weights);
  // A new engine whose stream is independent of this one's.
  Random Fork();

 private:
  uint64_t s_[4];
};

}  // namespace autotune
