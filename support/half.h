// The 16-bit floating-point types, float16 (IEEE binary16) and bfloat16, held as their bit patterns
// and converted to and from float exactly as NVIDIA GPUs convert them (PTX cvt.rn): round to
// nearest, ties to even, subnormals kept, overflow to infinity, NaN stays NaN. Host data, the C
// backend's kernels and the CUDA kernels then agree bit for bit on every rounded value.
#pragma once

#include <cstdint>

namespace autotune {

uint16_t FloatToHalfBits(float f);
float HalfBitsToFloat(uint16_t h);
uint16_t FloatToBFloat16Bits(float f);
float BFloat16BitsToFloat(uint16_t b);

}  // namespace autotune
