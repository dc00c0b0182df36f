#include "tir/schedule/perfect_tile.h"

namespace autotune::tir {

std::vector<int64_t> PrimeFactors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      out.push_back(p);
      n /= p;
    }
  }
  if (n > 1) out.push_back(n);
  return out;
}

std::vector<int64_t> RandomPerfectTile(Random& rng, int64_t extent, int n, int64_t max_innermost) {
  std::vector<int64_t> tiles;
  const auto primes = PrimeFactors(extent);
  for (int attempt = 0; attempt < 64; ++attempt) {
    tiles.assign(n, 1);
    for (int64_t p : primes) tiles[rng.UniformInt(0, n - 1)] *= p;
    if (max_innermost <= 0 || tiles.back() <= max_innermost) break;
  }
  // Still too large: move factors of the innermost level outward until it fits.
  if (max_innermost > 0) {
    for (int64_t p : PrimeFactors(tiles.back())) {
      if (tiles.back() <= max_innermost) break;
      tiles.back() /= p;
      tiles[0] *= p;
    }
  }
  return tiles;
}

}  // namespace autotune::tir
