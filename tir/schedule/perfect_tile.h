// Random perfect tilings: n tile sizes whose product is exactly an extent. Each prime factor of the
// extent goes to a uniformly random level; the innermost is kept at most max_innermost (0: no
// limit) by redrawing, then by moving factors outward. Shared by the sample_perfect_tile primitive
// and the schedule rules that draw several axes' tiles jointly before recording them.
#pragma once

#include <cstdint>
#include <vector>

#include "support/random.h"

namespace autotune::tir {

// The prime factors of n (n >= 1), smallest first, with repetition.
std::vector<int64_t> PrimeFactors(int64_t n);

std::vector<int64_t> RandomPerfectTile(Random& rng, int64_t extent, int n, int64_t max_innermost);

}  // namespace autotune::tir
