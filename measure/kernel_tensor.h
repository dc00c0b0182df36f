// A tensor as a kernel reads or writes it, in its element type: float32 values as they are, float16
// and bfloat16 as their bits (support/half.h). Host data, references and checks stay float32: a
// 16-bit input is rounded to its type before the reference sees it, and a 16-bit output is widened
// to float32 before it is checked.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "tir/dtype.h"

namespace autotune::measure {

class KernelTensor {
 public:
  KernelTensor() = default;
  KernelTensor(tir::DType dtype, int64_t elements);  // 64-byte aligned, uninitialized
  void* data() { return data_.get(); }
  int64_t elements() const { return elements_; }
  size_t bytes() const { return static_cast<size_t>(elements_) * static_cast<size_t>(tir::BytesOf(dtype_)); }
  tir::DType dtype() const { return dtype_; }

  void Pack(const float* values);    // values already of the type (see RoundToType)
  void Unpack(float* values) const;  // widened exactly
  void FillNaN();                    // what an unwritten output element reads as

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data_;
  tir::DType dtype_ = tir::DType::kFloat32;
  int64_t elements_ = 0;
};

// Rounds float32 values in place to the nearest values of `dtype` (float32: unchanged).
void RoundToType(float* values, int64_t n, tir::DType dtype);

// Widens `n` elements of `dtype` at `data` (a kernel's output, wherever it was copied) to float32.
void WidenToFloat(const void* data, int64_t n, tir::DType dtype, float* values);

// Rounds `values` in place to `dtype` and returns them as a kernel reads them (also for float32).
KernelTensor RoundAndPack(float* values, int64_t n, tir::DType dtype);

}  // namespace autotune::measure
