#include "tools/cpu_peer/peer_kernel.h"

#include "tir/ops/epilogue.h"

namespace autotune::cpu_peer {

int64_t SavedWorkload::Param(const std::string& name) const {
  const auto& shape = manifest.at("shape");
  return shape.contains(name) ? shape.at(name).get<int64_t>() : 0;
}

void ApplyEpilogue(const tir::Epilogue& epilogue, const std::vector<const float*>& inputs, int64_t rows,
                   int64_t channels, int64_t inner, float* out) {
  using tir::EpiloguePart;
  const int64_t total = rows * channels * inner;
  size_t next_input = 0;
  for (EpiloguePart p : epilogue.parts) {
    const float* in = tir::TakesInput(p) ? inputs.at(next_input++) : nullptr;
    if (p == EpiloguePart::kResidual) {
      for (int64_t i = 0; i < total; ++i) out[i] += in[i];
    } else if (in) {
      const bool scale = p == EpiloguePart::kScale;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < channels; ++c) {
          float* o = out + (r * channels + c) * inner;
          const float v = in[c];
          for (int64_t k = 0; k < inner; ++k) o[k] = scale ? o[k] * v : o[k] + v;
        }
      }
    } else {
      for (int64_t i = 0; i < total; ++i) out[i] = tir::ApplyActivation(p, out[i]);
    }
  }
}

}  // namespace autotune::cpu_peer
