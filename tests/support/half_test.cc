// 16-bit float conversions: every half and bfloat16 value round-trips, ties go to even, and where the
// compiler has _Float16 (GCC 12 on x86-64) the conversions agree with it bit for bit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "support/half.h"

namespace autotune {
namespace {

[[maybe_unused]] uint32_t BitsOf(float f) { return std::bit_cast<uint32_t>(f); }
float FloatOf(uint32_t x) { return std::bit_cast<float>(x); }

bool IsHalfNaN(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }
bool IsBFloat16NaN(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0; }

TEST(Half, EveryValueRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = HalfBitsToFloat(static_cast<uint16_t>(h));
    if (IsHalfNaN(static_cast<uint16_t>(h))) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_TRUE(IsHalfNaN(FloatToHalfBits(f))) << h;
    } else {
      ASSERT_EQ(FloatToHalfBits(f), h) << "half 0x" << std::hex << h << " = " << f;
    }
  }
}

TEST(Half, KnownValuesAndEdges) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bff);                // the largest half
  EXPECT_EQ(FloatToHalfBits(65519.99f), 0x7bff);               // below the midpoint to infinity
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00);                // the midpoint ties to infinity (even)
  EXPECT_EQ(FloatToHalfBits(1e10f), 0x7c00);
  EXPECT_EQ(FloatToHalfBits(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);   // the smallest subnormal
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -25)), 0x0000);   // half of it ties to zero (even)
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.5f, -24)), 0x0002);   // 1.5 units tie to 2 (even)
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -14)), 0x0400);   // the smallest normal
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000);
  EXPECT_TRUE(IsHalfNaN(FloatToHalfBits(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(HalfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfBitsToFloat(0x7c00), std::numeric_limits<float>::infinity());
}

// The midpoint between two neighbouring halves is a float; it rounds to the one with an even pattern.
TEST(Half, TiesGoToEven) {
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const float lo = HalfBitsToFloat(static_cast<uint16_t>(h)), hi = HalfBitsToFloat(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((static_cast<double>(lo) + hi) / 2);
    ASSERT_EQ(FloatToHalfBits(mid), (h & 1) ? h + 1 : h) << h;
    ASSERT_EQ(FloatToHalfBits(std::nextafter(mid, 0.0f)), h) << h;
    ASSERT_EQ(FloatToHalfBits(std::nextafter(mid, 1e9f)), h + 1) << h;
  }
}

#if defined(__FLT16_MAX__)
TEST(Half, AgreesWithTheCompilersFloat16) {
  for (uint64_t x = 0; x <= 0xffffffff; x += 997) {  // a million floats of every exponent
    const float f = FloatOf(static_cast<uint32_t>(x));
    const _Float16 h = static_cast<_Float16>(f);
    const auto bits = std::bit_cast<uint16_t>(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(IsHalfNaN(FloatToHalfBits(f)));
      continue;
    }
    ASSERT_EQ(FloatToHalfBits(f), bits) << "float 0x" << std::hex << x;
    ASSERT_EQ(BitsOf(HalfBitsToFloat(bits)), BitsOf(static_cast<float>(h))) << "half 0x" << std::hex << bits;
  }
}
#endif

TEST(BFloat16, EveryValueRoundTripsAndTiesGoToEven) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const float f = BFloat16BitsToFloat(static_cast<uint16_t>(b));
    if (IsBFloat16NaN(static_cast<uint16_t>(b))) {
      EXPECT_TRUE(IsBFloat16NaN(FloatToBFloat16Bits(f))) << b;
      continue;
    }
    ASSERT_EQ(FloatToBFloat16Bits(f), b) << b;
    if ((b & 0x7fff) >= 0x7f80) continue;  // infinity has no upper neighbour
    const uint32_t mid = (b << 16) | 0x8000;  // halfway to the next bfloat16 of larger magnitude
    ASSERT_EQ(FloatToBFloat16Bits(FloatOf(mid)), (b & 1) ? b + 1 : b) << b;
    ASSERT_EQ(FloatToBFloat16Bits(FloatOf(mid + 1)), b + 1) << b;
    ASSERT_EQ(FloatToBFloat16Bits(FloatOf(mid - 1)), b) << b;
  }
  EXPECT_EQ(FloatToBFloat16Bits(std::numeric_limits<float>::max()), 0x7f80);  // past the midpoint: infinity
  EXPECT_EQ(FloatToBFloat16Bits(1.0f), 0x3f80);
  EXPECT_TRUE(IsBFloat16NaN(FloatToBFloat16Bits(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace autotune
