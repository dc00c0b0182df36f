// The host data of one workload that every candidate is checked against: random inputs and the
// reference output. Made once per (workload, seed) and shared by all candidates and runners.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "measure/kernel_tensor.h"
#include "tir/ops/workload.h"
#include "support/random.h"

namespace autotune::measure {

// A 64-byte aligned float array (aligned like the buffers a real framework would pass).
class AlignedFloats {
 public:
  AlignedFloats() = default;
  explicit AlignedFloats(int64_t n);
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  int64_t size() const { return size_; }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float[], Free> data_;
  int64_t size_ = 0;
};

struct WorkloadData {
  std::vector<AlignedFloats> inputs;  // in the workload's input order; 16-bit ones rounded to their type
  // The 16-bit inputs in their type, as kernels read them (empty for float32 inputs: `inputs` serve).
  std::vector<KernelTensor> packed;
  AlignedFloats reference;            // workload.reference applied to the inputs
  double reference_scale = 1;         // see measure/reference_check.h

  // What a kernel is handed for input i.
  void* KernelInput(size_t i) const {
    return packed[i].elements() > 0 ? const_cast<KernelTensor&>(packed[i]).data() : const_cast<float*>(inputs[i].data());
  }
};

// Uniform in [-1, 1) from autotune's one engine: the same on every platform and standard library.
void FillRandom(float* data, int64_t n, Random& rng);

// The random inputs of a workload whose inputs have these element counts: input i is filled from
// the i-th Fork() of Random(seed). Every runner (and the CUDA executor, which makes the inputs in
// its own process) uses this, so all targets see the same data for the same seed.
// The in-memory identity of a workload's data: operator, shape, epilogue, tensor shapes and the
// seed (not a persistent key: the database has its own, versioned).
std::string WorkloadDataKey(const tir::Workload& w, uint64_t seed);

std::vector<AlignedFloats> MakeRandomInputs(const std::vector<int64_t>& element_counts, uint64_t seed);

// Keeps the data of the last few workloads (a tuning run moves through workloads one at a time).
class WorkloadDataCache {
 public:
  explicit WorkloadDataCache(size_t capacity = 2) : capacity_(capacity) {}
  std::shared_ptr<const WorkloadData> Get(const tir::Workload& w, uint64_t seed);

 private:
  size_t capacity_;
  std::mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<const WorkloadData>>> entries_;  // most recent first
};

}  // namespace autotune::measure
