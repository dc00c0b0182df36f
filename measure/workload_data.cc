#include "measure/workload_data.h"

#include <fmt/format.h>

#include <algorithm>

#include "measure/reference_check.h"
#include "support/check.h"

namespace autotune::measure {
// An in-memory identity of the workload's data (not a persistent key).
std::string WorkloadDataKey(const tir::Workload& w, uint64_t seed) {
  std::string k = fmt::format("{}|{}|seed={}", w.op, w.epilogue, seed);
  for (const auto& [name, v] : w.shape) k += fmt::format("|{}={}", name, v);
  auto spec = [&](const tir::TensorSpec& t) {
    k += "|" + t.name + ":" + tir::DTypeName(t.dtype);
    for (int64_t d : t.shape) k += fmt::format(",{}", d);
  };
  for (const auto& t : w.inputs) spec(t);
  for (const auto& t : w.Outputs()) spec(t);
  return k;
}

AlignedFloats::AlignedFloats(int64_t n) : size_(n) {
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float) + 63) / 64 * 64;
  data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  AUTOTUNE_CHECK(data_, "out of memory for workload data");
}

void FillRandom(float* data, int64_t n, Random& rng) {
  for (int64_t i = 0; i < n; ++i) {
    // 24 random bits: exactly representable, uniform in [-1, 1).
    const uint64_t bits = rng.Next() >> 40;
    data[i] = static_cast<float>(static_cast<double>(bits) * (2.0 / 16777216.0) - 1.0);
  }
}

std::vector<AlignedFloats> MakeRandomInputs(const std::vector<int64_t>& element_counts, uint64_t seed) {
  std::vector<AlignedFloats> inputs;
  Random base(seed);
  for (int64_t n : element_counts) {
    AlignedFloats a(n);
    // A different stream per input, so that A and B of a gemm are not the same matrix.
    Random rng = base.Fork();
    FillRandom(a.data(), a.size(), rng);
    inputs.push_back(std::move(a));
  }
  return inputs;
}

std::shared_ptr<const WorkloadData> WorkloadDataCache::Get(const tir::Workload& w, uint64_t seed) {
  const std::string key = WorkloadDataKey(w, seed);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == key) {
      entries_.splice(entries_.begin(), entries_, it);
      return it->second;
    }
  }
  auto data = std::make_shared<WorkloadData>();
  std::vector<int64_t> counts;
  for (const auto& in : w.inputs) counts.push_back(in.NumElements());
  data->inputs = MakeRandomInputs(counts, seed);
  data->packed.resize(w.inputs.size());
  for (size_t i = 0; i < w.inputs.size(); ++i) {
    if (!tir::IsHalf(w.inputs[i].dtype)) continue;
    data->packed[i] = RoundAndPack(data->inputs[i].data(), data->inputs[i].size(), w.inputs[i].dtype);
  }
  std::vector<const float*> ptrs;
  for (const auto& a : data->inputs) ptrs.push_back(a.data());
  data->reference = AlignedFloats(w.OutputElements());
  AUTOTUNE_CHECK(w.reference, "workload without a reference");
  w.reference(ptrs, data->reference.data());
  data->reference_scale = ReferenceScale(data->reference.data(), data->reference.size());
  entries_.emplace_front(key, std::move(data));
  if (entries_.size() > capacity_) entries_.pop_back();
  return entries_.front().second;
}

}  // namespace autotune::measure
