// What the gemm-4096 experiments (variants.cu, tf32x3.cu) share: error checks, the random inputs, and
// the timing method of docs/BENCHMARKS.md's hand-written probes (L2 flushed by a 256 MB write before
// each launch, CUDA events, median of the last 22 of 25 launches).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

inline void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Uniform in [-1, 1) from rand(): A and then B after srand(1), in both programs.
inline void FillUniform(std::vector<float>& h) {
  for (auto& x : h) x = (rand() / static_cast<float>(RAND_MAX)) * 2 - 1;
}

// Median milliseconds of `launch` (any callable that launches one kernel), `flush` a 256 MB buffer.
template <typename Launch>
double MedianMs(Launch&& launch, unsigned char* flush, const char* what) {
  cudaEvent_t e0, e1;
  Check(cudaEventCreate(&e0), "event");
  Check(cudaEventCreate(&e1), "event");
  std::vector<float> ms;
  for (int r = 0; r < 25; ++r) {
    Check(cudaMemset(flush, r, 256 << 20), "flush");
    Check(cudaEventRecord(e0), "record");
    launch();
    Check(cudaEventRecord(e1), "record");
    Check(cudaEventSynchronize(e1), what);
    float t;
    Check(cudaEventElapsedTime(&t, e0, e1), "elapsed");
    if (r >= 3) ms.push_back(t);
  }
  Check(cudaEventDestroy(e0), "event");
  Check(cudaEventDestroy(e1), "event");
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
