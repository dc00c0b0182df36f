#include "measure/kernel_tensor.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "support/check.h"
#include "support/half.h"
#include "support/parallel_for.h"

namespace autotune::measure {
namespace {

uint16_t ToBits(float v, tir::DType t) {
  return t == tir::DType::kFloat16 ? FloatToHalfBits(v) : FloatToBFloat16Bits(v);
}

float FromBits(uint16_t b, tir::DType t) { return t == tir::DType::kFloat16 ? HalfBitsToFloat(b) : BFloat16BitsToFloat(b); }

}  // namespace

KernelTensor::KernelTensor(tir::DType dtype, int64_t elements) : dtype_(dtype), elements_(elements) {
  AUTOTUNE_CHECK(dtype == tir::DType::kFloat32 || tir::IsHalf(dtype), "kernel tensors are float32, float16 or bfloat16");
  const size_t bytes = (std::max<size_t>(this->bytes(), 1) + 63) / 64 * 64;
  data_.reset(std::aligned_alloc(64, bytes));
  AUTOTUNE_CHECK(data_, "out of memory for a kernel tensor");
}

void KernelTensor::Pack(const float* values) {
  if (dtype_ == tir::DType::kFloat32) {
    std::memcpy(data(), values, bytes());
    return;
  }
  auto* bits = static_cast<uint16_t*>(data());
  for (int64_t i = 0; i < elements_; ++i) bits[i] = ToBits(values[i], dtype_);
}

void KernelTensor::Unpack(float* values) const { WidenToFloat(data_.get(), elements_, dtype_, values); }

void KernelTensor::FillNaN() {
  if (dtype_ == tir::DType::kFloat32) {
    auto* f = static_cast<float*>(data());
    std::fill(f, f + elements_, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  auto* bits = static_cast<uint16_t*>(data());
  std::fill(bits, bits + elements_, ToBits(std::numeric_limits<float>::quiet_NaN(), dtype_));
}

void RoundToType(float* values, int64_t n, tir::DType dtype) {
  if (!tir::IsHalf(dtype)) return;
  for (int64_t i = 0; i < n; ++i) values[i] = FromBits(ToBits(values[i], dtype), dtype);
}

void WidenToFloat(const void* data, int64_t n, tir::DType dtype, float* values) {
  if (dtype == tir::DType::kFloat32) {
    std::memcpy(values, data, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  // Every candidate's output is widened before its check: a 4096^2 gemm's 16 Mi elements take about
  // 25 ms on one core, as long as its timed repeats. Large ones go in slices on every core.
  constexpr int64_t kSlice = int64_t{1} << 20;
  const int64_t slices = (n + kSlice - 1) / kSlice;
  const auto* bits = static_cast<const uint16_t*>(data);
  ParallelFor(static_cast<int>(std::min<int64_t>(slices, UsableCores())), static_cast<size_t>(slices), [&](size_t s) {
    const int64_t end = std::min(n, static_cast<int64_t>(s + 1) * kSlice);
    for (int64_t i = static_cast<int64_t>(s) * kSlice; i < end; ++i) values[i] = FromBits(bits[i], dtype);
  });
}

KernelTensor RoundAndPack(float* values, int64_t n, tir::DType dtype) {
  RoundToType(values, n, dtype);
  KernelTensor t(dtype, n);
  t.Pack(values);
  return t;
}

}  // namespace autotune::measure
