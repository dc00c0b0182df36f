// The mma.sync ceiling of a GPU: warps issuing independent m16n8k16 float16 products (float32
// accumulators) from registers only, no memory traffic, for several warp and block counts. It bounds
// what any mma.sync kernel (autotune's cuda.tensor_core sketch) can reach; docs/BENCHMARKS.md quotes it.
//
//   nvcc -O3 -arch sm_90 -o mma_sync_peak bench/mma_sync_peak.cu && ./mma_sync_peak
#include <cuda_runtime.h>

#include <cstdio>

__device__ __forceinline__ void Mma(float* d, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Each warp keeps `Tiles` accumulators, so consecutive products do not wait for each other.
template <int Tiles>
__global__ void Products(float* sink, int iterations) {
  unsigned a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = threadIdx.x * 7u + i;
  for (int i = 0; i < 2; ++i) b[i] = threadIdx.x * 3u + i;
  float acc[Tiles][4] = {};
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int t = 0; t < Tiles; ++t) Mma(acc[t], a, b);
  }
  float sum = 0;
  for (int t = 0; t < Tiles; ++t) sum += acc[t][0] + acc[t][1] + acc[t][2] + acc[t][3];
  if (sum == 12345.0f) *sink = sum;  // never true; keeps the products live
}

template <int Tiles>
void Run(int sms, int warps_per_block, int blocks_per_sm) {
  float* sink = nullptr;
  cudaMalloc(&sink, sizeof(float));
  const int blocks = sms * blocks_per_sm, iterations = 4096;
  Products<Tiles><<<blocks, 32 * warps_per_block>>>(sink, 16);  // warm-up
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  Products<Tiles><<<blocks, 32 * warps_per_block>>>(sink, iterations);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  const double flops = 2.0 * 16 * 8 * 16 * Tiles * static_cast<double>(iterations) * blocks * warps_per_block;
  std::printf("%2d accumulators a warp, %2d warps a block, %d blocks an SM: %6.1f TFLOP/s (%s)\n", Tiles,
              warps_per_block, blocks_per_sm, flops / ms / 1e9, cudaGetErrorString(cudaGetLastError()));
  cudaFree(sink);
}

int main() {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "mma_sync_peak: no CUDA device\n");
    return 1;
  }
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const int sms = prop.multiProcessorCount;
  Run<8>(sms, 4, 1);
  Run<8>(sms, 4, 2);
  Run<16>(sms, 4, 2);
  Run<32>(sms, 4, 2);
  Run<32>(sms, 8, 1);
  Run<16>(sms, 16, 1);
  return 0;
}
