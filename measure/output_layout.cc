#include "measure/output_layout.h"

#include <cstring>

namespace autotune::measure {

namespace {
constexpr int64_t kAlignmentBytes = 256;
}

OutputLayout OutputLayout::Of(const std::vector<int64_t>& counts, tir::DType dtype) {
  OutputLayout l;
  l.counts = counts;
  const int64_t align = kAlignmentBytes / tir::BytesOf(dtype);
  for (int64_t n : counts) {
    l.buffer_elements = (l.buffer_elements + align - 1) / align * align;
    l.offsets.push_back(l.buffer_elements);
    l.buffer_elements += n;
    l.total += n;
  }
  return l;
}

OutputLayout OutputLayout::Of(const tir::Workload& w) {
  std::vector<int64_t> counts;
  for (const auto& t : w.Outputs()) counts.push_back(t.NumElements());
  return Of(counts, w.output.dtype);
}

void OutputLayout::Compact(float* buffer) const {
  int64_t to = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (offsets[i] != to) std::memmove(buffer + to, buffer + offsets[i], static_cast<size_t>(counts[i]) * sizeof(float));
    to += counts[i];
  }
}

}  // namespace autotune::measure
