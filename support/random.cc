#include "support/random.h"

namespace autotune {

namespace {
uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Random::Random(uint64_t seed) {
  for (auto& s : s_) s = SplitMix64(seed);
}

uint64_t Random::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

int64_t Random::UniformInt(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t range = static_cast<uint64_t>(hi - lo) + 1;
  if (range == 0) return static_cast<int64_t>(Next());
  // Rejection sampling removes the modulo bias.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  uint64_t x;
  do {
    x = Next();
  } while (x >= limit);
  return lo + static_cast<int64_t>(x % range);
}

double Random::UniformReal() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }

int Random::Categorical(const std::vector<double>& weights) {
  double total = 0;
  for (double w : weights) total += w > 0 ? w : 0;
  if (weights.empty()) return 0;
  if (total <= 0) return static_cast<int>(UniformInt(0, static_cast<int64_t>(weights.size()) - 1));
  double r = UniformReal() * total;
  for (size_t i = 0; i < weights.size(); ++i) {
    double w = weights[i] > 0 ? weights[i] : 0;
    if (r < w) return static_cast<int>(i);
    r -= w;
  }
  return static_cast<int>(weights.size()) - 1;
}

Random Random::Fork() { return Random(Next() ^ 0xa0761d6478bd642fULL); }

}  // namespace autotune
