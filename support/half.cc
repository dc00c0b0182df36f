#include "support/half.h"

#include <bit>
#include <cmath>

namespace autotune {
namespace {

uint32_t BitsOf(float f) { return std::bit_cast<uint32_t>(f); }
float FloatOf(uint32_t x) { return std::bit_cast<float>(x); }

// m >> shift, rounded to nearest with ties to even (shift in 1..31).
uint32_t ShiftRoundEven(uint32_t m, int shift) {
  const uint32_t kept = m >> shift, rest = m & ((uint32_t{1} << shift) - 1), half = uint32_t{1} << (shift - 1);
  return kept + (rest > half || (rest == half && (kept & 1)) ? 1 : 0);
}

}  // namespace

uint16_t FloatToHalfBits(float f) {
  const uint32_t x = BitsOf(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7fffffff;
  if (ax > 0x7f800000) return sign | 0x7e00;            // NaN (quiet)
  if (ax >= 0x477ff000) return sign | 0x7c00;           // 65520 and above round to infinity
  if (ax >= 0x38800000) {                               // a normal half: rebias the exponent by 112
    const uint32_t rounded = ax + 0xc8000fff + ((ax >> 13) & 1);
    return sign | static_cast<uint16_t>(rounded >> 13);
  }
  if (ax < 0x33000000) return sign;                     // at most 2^-25: rounds to zero
  // A subnormal half counts units of 2^-24: f = m * 2^(e - 150), so the count is m >> (126 - e).
  const int e = static_cast<int>(ax >> 23);
  const uint32_t m = (ax & 0x7fffff) | 0x800000;
  return sign | static_cast<uint16_t>(ShiftRoundEven(m, 126 - e));
}

float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) return FloatOf(sign | 0x7f800000 | (m << 13));
  if (e == 0) {
    const float v = std::ldexp(static_cast<float>(m), -24);  // exact: m < 2^10
    return sign ? -v : v;
  }
  return FloatOf(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t x = BitsOf(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // NaN (quiet)
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

float BFloat16BitsToFloat(uint16_t b) { return FloatOf(static_cast<uint32_t>(b) << 16); }

}  // namespace autotune
