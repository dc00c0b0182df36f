// Experiment: what limits the tuned gemm-4096 kernel (2.77 ms vs cuBLAS 2.67-2.73 ms on the H200)?
// Variants of the tuned schedule: pipeline stages, k-loop unrolling, occupancy, block order, a k-major A
// tile, fragments double-buffered in registers, and a kernel of the shape cuBLAS runs.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <chrono>
#include <string>
#include <cuda_runtime.h>

#include "timing.cuh"
#include "helpers.inc"  // the generated kernel's helpers (scripts/gemm4096/variants)
#include "v0_body.inc"  // the generated kernel, renamed k_generated

// Tile index of block `bx` when blocks walk groups of G tile rows column by column (32 x 32 tiles),
// so that the blocks resident at once share rows of A and columns of B in L2.
template <int G>
__device__ __forceinline__ int SwizzledTile(int bx) {
  const int group = bx / (G * 32), in = bx % (G * 32);
  return (group * G + in % G) * 32 + in / G;
}
#include "v0_swz.inc"  // the generated kernel with its blocks in that order, k_generated_swz<G>

template <int N>
__device__ __forceinline__ void wait_only() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// The generated kernel's tile (128 x 128, k-tile 32, 16 x 8 outputs a thread) with STAGES cp.async
// stages, the k loop unrolled UNROLL times and MINB blocks per SM asked of ptxas. ORDER picks the
// inner loop: -1, the generated one (reduction split 16 x 2, the 2 inside the spatial loops); else
// the way CUTLASS's thread-level SIMT product is written, a k's fragments loaded into registers first
// (A as 64-bit pairs of k, B as two 128-bit pieces), then the outer product row by row (0) or row by
// row with every other row backwards (1, serpentine: the turn reuses B's register too). The order
// shapes ptxas's operand-reuse flags and register banks. (Column by column, serpentine, was measured
// too: docs/BENCHMARKS.md, twenty-fourth session; its code is in ed6cbe0.)
template <int STAGES, int UNROLL, int MINB, int ORDER = -1>
__global__ void __launch_bounds__(128, MINB) k_variant(const float* __restrict__ A, const float* __restrict__ B,
                                                 float* __restrict__ C) {
  extern __shared__ __align__(16) float sm[];
  float* As = sm;
  float* Bs = sm + STAGES * 4096;
  const int ti = blockIdx.x >> 5, tj = blockIdx.x & 31;
  const int t = threadIdx.x;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;
  auto fill = [&](int kt, int st) {
    for (int a = 0; a < 8; ++a)
      at_cp_async_16(&As[st * 4096 + a * 512 + t * 4], &A[ti * 524288 + a * 65536 + (t >> 3) * 4096 + kt * 32 + (t & 7) * 4]);
    for (int b = 0; b < 8; ++b)
      at_cp_async_16(&Bs[st * 4096 + b * 512 + t * 4], &B[kt * 131072 + b * 16384 + (t >> 5) * 4096 + tj * 128 + (t & 31) * 4]);
  };
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    fill(s, s);
    commit();
  }
  for (int kt = 0; kt < 128; ++kt) {
    if (kt + STAGES - 1 < 128) fill(kt + STAGES - 1, (kt + STAGES - 1) % STAGES);
    commit();
    wait_only<STAGES - 1>();
    __syncthreads();
    const float* a = As + (kt % STAGES) * 4096 + (t >> 4) * 512;
    const float* b = Bs + (kt % STAGES) * 4096 + (t & 15) * 4;
#pragma unroll UNROLL
    for (int k1 = 0; k1 < 16; ++k1) {
      if constexpr (ORDER < 0) {
#pragma unroll
        for (int i0 = 0; i0 < 8; ++i0)
#pragma unroll
          for (int j0 = 0; j0 < 2; ++j0)
#pragma unroll
            for (int k2 = 0; k2 < 2; ++k2)
#pragma unroll
              for (int i1 = 0; i1 < 2; ++i1)
#pragma unroll
                for (int j1 = 0; j1 < 2; ++j1)
#pragma unroll
                  for (int ij = 0; ij < 2; ++ij)
                    acc[ij * 64 + i0 * 8 + i1 * 4 + j0 * 2 + j1] +=
                        a[i0 * 64 + i1 * 32 + k1 * 2 + k2] * b[k1 * 256 + k2 * 128 + ij * 64 + j0 * 2 + j1];
      } else {
        float2 af[16];
        float bf[2][8];
#pragma unroll
        for (int i = 0; i < 16; ++i) af[i] = *reinterpret_cast<const float2*>(a + i * 32 + k1 * 2);
#pragma unroll
        for (int k2 = 0; k2 < 2; ++k2)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            *reinterpret_cast<float4*>(&bf[k2][h * 4]) = *reinterpret_cast<const float4*>(b + (k1 * 2 + k2) * 128 + h * 64);
#pragma unroll
        for (int k2 = 0; k2 < 2; ++k2)
#pragma unroll
          for (int i = 0; i < 16; ++i)
#pragma unroll
            for (int m = 0; m < 8; ++m) {
              const int n = (ORDER == 1 && (i & 1)) ? 7 - m : m;
              acc[(n >> 2) * 64 + i * 4 + (n & 3)] += (k2 ? af[i].y : af[i].x) * bf[k2][n];
            }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 16; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      *reinterpret_cast<float4*>(&C[(ti * 128 + (t >> 4) * 16 + i) * 4096 + tj * 128 + h * 64 + (t & 15) * 4]) =
          make_float4(acc[h * 64 + i * 4], acc[h * 64 + i * 4 + 1], acc[h * 64 + i * 4 + 2], acc[h * 64 + i * 4 + 3]);
}

__device__ __forceinline__ void cp_async_4(float* dst, const float* src) {
  unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
}

// The A tile stored k-major ([k][m], rows padded to 132 floats) so that a thread's 16 rows of A
// for one k are four 128-bit shared loads, as B's are. Filled with 4-byte cp.async: 8 lanes read a
// 32-byte sector of one row of A, and (4k + m) % 32 keeps a warp's 32 stores on 32 banks. FRAG2: the
// k loop unrolled, the next k's shared loads issued before this k's FMAs.
template <int UNROLL, int MINB, int FRAG2 = 0>
__global__ void __launch_bounds__(128, MINB) k_trans(const float* __restrict__ A, const float* __restrict__ B,
                                                     float* __restrict__ C) {
  constexpr int AS = 32 * 132;  // one stage of the A tile
  extern __shared__ __align__(16) float sm[];
  float* As = sm;
  float* Bs = sm + 2 * AS;
  const int ti = blockIdx.x >> 5, tj = blockIdx.x & 31;
  const int t = threadIdx.x, l = t & 31, w = t >> 5;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;
  auto fill = [&](int kt, int st) {
#pragma unroll
    for (int it = 0; it < 32; ++it) {
      int k = (l & 7) + 8 * (it & 3);
      int m = (l >> 3) + 4 * w + 16 * (it >> 2);
      cp_async_4(&As[st * AS + k * 132 + m], &A[(ti * 128 + m) * 4096 + kt * 32 + k]);
    }
    for (int b = 0; b < 8; ++b)
      at_cp_async_16(&Bs[st * 4096 + b * 512 + t * 4], &B[kt * 131072 + b * 16384 + (t >> 5) * 4096 + tj * 128 + (t & 31) * 4]);
  };
  fill(0, 0);
  commit();
  for (int kt = 0; kt < 128; ++kt) {
    if (kt + 1 < 128) fill(kt + 1, (kt + 1) & 1);
    commit();
    wait_only<1>();
    __syncthreads();
    const float* a = As + (kt & 1) * AS + (t >> 4) * 16;
    const float* b = Bs + (kt & 1) * 4096 + (t & 15) * 4;
    // acc += a 16-row column of A times an 8-wide row of B (two pieces of 4, 64 apart)
    auto outer_product = [&](const float* af, const float* bf) {
#pragma unroll
      for (int i = 0; i < 16; ++i)
#pragma unroll
        for (int ij = 0; ij < 2; ++ij)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[ij * 64 + i * 4 + j] += af[i] * bf[ij * 4 + j];
    };
    if constexpr (FRAG2 != 0) {  // the next k's fragments load while this k's FMAs run
      float4 av[2][4], bv[2][2];
      auto load = [&](int k, int buf) {
#pragma unroll
        for (int q = 0; q < 4; ++q) av[buf][q] = *reinterpret_cast<const float4*>(a + k * 132 + q * 4);
#pragma unroll
        for (int ij = 0; ij < 2; ++ij) bv[buf][ij] = *reinterpret_cast<const float4*>(b + k * 128 + ij * 64);
      };
      load(0, 0);
#pragma unroll
      for (int k = 0; k < 32; ++k) {
        if (k < 31) load(k + 1, (k + 1) & 1);
        outer_product(reinterpret_cast<const float*>(av[k & 1]), reinterpret_cast<const float*>(bv[k & 1]));
      }
    } else {
#pragma unroll UNROLL
      for (int k = 0; k < 32; ++k) {
        float4 av[4], bv[2];
#pragma unroll
        for (int q = 0; q < 4; ++q) av[q] = *reinterpret_cast<const float4*>(a + k * 132 + q * 4);
#pragma unroll
        for (int ij = 0; ij < 2; ++ij) bv[ij] = *reinterpret_cast<const float4*>(b + k * 128 + ij * 64);
        outer_product(reinterpret_cast<const float*>(av), reinterpret_cast<const float*>(bv));
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i3 = 0; i3 < 16; ++i3)
#pragma unroll
    for (int ij = 0; ij < 2; ++ij)
      *reinterpret_cast<float4*>(&C[(ti * 128 + (t >> 4) * 16 + i3) * 4096 + tj * 128 + ij * 64 + (t & 15) * 4]) =
          make_float4(acc[ij * 64 + i3 * 4], acc[ij * 64 + i3 * 4 + 1], acc[ij * 64 + i3 * 4 + 2], acc[ij * 64 + i3 * 4 + 3]);
}

// The shape of cuBLAS's kernel for this product on the H200 (Nsight Compute names it
// sm80_xmma_gemm_..._tilesize256x128x8_stage3_warpsize4x2x1_ffma: 256 threads, 254 registers, one
// block per SM): 256 x 128 tiles, k-tile 8, three cp.async stages, the A tile stored k-major (4-byte
// copies, rows padded to 260 floats so a warp's stores hit 32 banks), warps 4 x 2 over 64 x 64, each
// thread 16 x 8 outputs in 4 x 4 pieces so that a warp's 128-bit shared loads never conflict: six
// per k (4 of A, 2 of B) for 128 FMAs. FRAG2: the shared
// loads of k + 1 are issued before the FMAs of k (fragments double-buffered in registers).
template <int FRAG2>
__global__ void __launch_bounds__(256, 1) k_cublaslike(const float* __restrict__ A, const float* __restrict__ B,
                                                       float* __restrict__ C) {
  constexpr int AS = 8 * 260, BS = 8 * 128, STAGE = AS + BS;
  extern __shared__ __align__(16) float sm[];
  const int tm = blockIdx.x & 15, tn = blockIdx.x >> 4;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int wm = warp & 3, wn = warp >> 2, lm = lane >> 3, ln = lane & 7;
  float acc[16][8];
#pragma unroll
  for (int i = 0; i < 16; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
  const float* a_src = A + (tm * 256 + (t >> 3)) * 4096 + (t & 7);
  const float* b_src = B + (t >> 5) * 4096 + tn * 128 + (t & 31) * 4;
  auto fill = [&](int kt, int st) {
    float* as = sm + st * STAGE;
#pragma unroll
    for (int i = 0; i < 8; ++i) cp_async_4(&as[(t & 7) * 260 + (t >> 3) + 32 * i], a_src + 32 * i * 4096 + kt * 8);
    at_cp_async_16(&sm[st * STAGE + AS + (t >> 5) * 128 + (t & 31) * 4], b_src + kt * 8 * 4096);
  };
  fill(0, 0);
  commit();
  fill(1, 1);
  commit();
  for (int kt = 0; kt < 512; ++kt) {
    wait_only<1>();
    __syncthreads();
    if (kt + 2 < 512) fill(kt + 2, (kt + 2) % 3);
    commit();
    const float* as = sm + (kt % 3) * STAGE + wm * 64 + lm * 4;
    const float* bs = sm + (kt % 3) * STAGE + AS + wn * 64 + ln * 4;
    float a[2][16], b[2][8];  // FRAG2: the next k's fragments load while this k's FMAs run
    auto load = [&](int k, int buf) {
#pragma unroll
      for (int q = 0; q < 4; ++q) *reinterpret_cast<float4*>(&a[buf][q * 4]) = *reinterpret_cast<const float4*>(as + k * 260 + q * 16);
#pragma unroll
      for (int h = 0; h < 2; ++h) *reinterpret_cast<float4*>(&b[buf][h * 4]) = *reinterpret_cast<const float4*>(bs + k * 128 + h * 32);
    };
    load(0, 0);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int cur = FRAG2 ? k & 1 : 0;
      if (FRAG2 && k < 7) load(k + 1, cur ^ 1);
      if (!FRAG2 && k > 0) load(k, 0);
#pragma unroll
      for (int i = 0; i < 16; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[cur][i] * b[cur][j];
    }
  }
#pragma unroll
  for (int q = 0; q < 4; ++q)
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int i = q * 4 + r;
        *reinterpret_cast<float4*>(&C[(tm * 256 + wm * 64 + q * 16 + lm * 4 + r) * 4096 + tn * 128 + wn * 64 + h * 32 + ln * 4]) =
            make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
      }
}

using Kernel = void (*)(const float*, const float*, float*);

// `gemm_variants sustain I S`: variant I launched back to back for S seconds (for the clock and
// power the GPU holds under it, sampled outside by nvidia-smi); no timing printed.
int main(int argc, char** argv) {
  const bool sustain = argc == 4 && std::string(argv[1]) == "sustain";
  const size_t n = 4096ull * 4096ull;
  std::vector<float> h(n);
  float *A, *B, *C, *R;
  unsigned char* flush;
  Check(cudaMalloc(&A, n * 4), "malloc");
  Check(cudaMalloc(&B, n * 4), "malloc");
  Check(cudaMalloc(&C, n * 4), "malloc");
  Check(cudaMalloc(&R, n * 4), "malloc");
  Check(cudaMalloc(&flush, 256 << 20), "malloc");
  srand(1);
  FillUniform(h);
  cudaMemcpy(A, h.data(), n * 4, cudaMemcpyHostToDevice);
  FillUniform(h);
  cudaMemcpy(B, h.data(), n * 4, cudaMemcpyHostToDevice);

  constexpr int kTransSmem = 2 * 32 * 132 * 4 + 2 * 16384;        // k_trans: two stages of A (padded) and B
  constexpr int kCublasLikeSmem = 3 * (8 * 260 + 8 * 128) * 4;  // k_cublaslike: three stages
  struct V {
    const char* name;
    Kernel k;
    int smem;
    int blocks = 1024, threads = 128;
  };
  // The best of each idea tried (the others, and their figures, are in docs/BENCHMARKS.md; their code
  // is in this file's history up to 75d3a3f).
  std::vector<V> vs = {
      {"generated (2 stages, 64 KB)", k_generated, 65536},
      {"3 stages, unroll 16, minb 2", k_variant<3, 16, 2>, 3 * 32768},
      {"generated, block order in groups of 8 tile rows", k_generated_swz<8>, 65536},
      {"cuBLAS's shape (256x128x8, 3 stages, A k-major)", k_cublaslike<0>, kCublasLikeSmem, 512, 256},
      {"cuBLAS's shape, fragments double-buffered", k_cublaslike<1>, kCublasLikeSmem, 512, 256},
      {"A k-major, unroll 8, minb 3", k_trans<8, 3>, kTransSmem},
      {"A k-major, fragments double-buffered, minb 2", k_trans<32, 2, 1>, kTransSmem},
      {"fragments first, rows serpentine", k_variant<2, 1, 3, 1>, 65536},
  };
  if (argc == 2 && std::string(argv[1]) == "waves") {
    // The generated kernel on 1 to 3 full waves of 132 SMs x 3 blocks and on the 1024 blocks of the
    // product (2.59 waves): A and C padded to 38 tile rows so that 1188 blocks stay in bounds. If
    // 1024 blocks take about as long as 1188, the last, partly filled wave costs a whole one.
    float *Abig, *Cbig;
    Check(cudaMalloc(&Abig, 38ull * 128 * 4096 * 4), "malloc");
    Check(cudaMalloc(&Cbig, 38ull * 128 * 4096 * 4), "malloc");
    cudaMemcpy(Abig, A, n * 4, cudaMemcpyDeviceToDevice);
    cudaMemset(Abig + n, 0, 6ull * 128 * 4096 * 4);
    Check(cudaFuncSetAttribute(k_generated, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536), "attr");
    for (int blocks : {132, 264, 396, 528, 660, 792, 924, 1024, 1056, 1188}) {
      const double med = MedianMs([&] { k_generated<<<blocks, 128, 65536>>>(Abig, B, Cbig); }, flush, "waves");
      std::printf("generated, %4d blocks (%.2f waves of 396): median %.4f ms\n", blocks, blocks / 396.0, med);
    }
    return 0;
  }
  if (sustain) {
    V& v = vs.at(std::stoul(argv[2]));
    Check(cudaFuncSetAttribute(v.k, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem), "attr");
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::stod(argv[3]));
    int launches = 0;
    while (std::chrono::steady_clock::now() < end) {
      for (int i = 0; i < 20; ++i) v.k<<<v.blocks, v.threads, v.smem>>>(A, B, C);
      launches += 20;
      Check(cudaDeviceSynchronize(), v.name);
    }
    std::printf("sustained %s: %d launches\n", v.name, launches);
    return 0;
  }
  std::vector<float> ref(n), out(n);
  for (size_t vi = 0; vi < vs.size(); ++vi) {
    V& v = vs[vi];
    Check(cudaFuncSetAttribute(v.k, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem), "attr");
    int blocks = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, v.k, v.threads, v.smem);
    cudaFuncAttributes fa;
    cudaFuncGetAttributes(&fa, v.k);
    cudaMemset(C, 0, n * 4);
    v.k<<<v.blocks, v.threads, v.smem>>>(A, B, vi == 0 ? R : C);
    Check(cudaDeviceSynchronize(), v.name);
    double err = 0;
    if (vi > 0) {
      cudaMemcpy(ref.data(), R, n * 4, cudaMemcpyDeviceToHost);
      cudaMemcpy(out.data(), C, n * 4, cudaMemcpyDeviceToHost);
      for (size_t i = 0; i < n; ++i) err = std::max(err, (double)std::fabs(ref[i] - out[i]));
    }
    const double med = MedianMs([&] { v.k<<<v.blocks, v.threads, v.smem>>>(A, B, C); }, flush, v.name);
    std::printf("%-42s regs %3d  blocks/SM %d  median %.4f ms  %.1f TFLOP/s  max|diff| %.2e\n", v.name, fa.numRegs,
                blocks, med, 2.0 * n * 4096 / med / 1e9, err);
  }
  return 0;
}
