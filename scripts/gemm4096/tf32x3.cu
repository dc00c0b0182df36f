// Experiment: how fast is a float32 gemm 4096^3 on the H200's tensor cores when each float is split
// into two TF32 parts and three TF32 products are summed ("3xTF32": a*b ~ as*bb + ab*bs + ab*bb, where
// ab = tf32(a) and as = tf32(a - ab)), against the generated FMA kernel and cuBLAS's FMA kernel, and
// how close does it stay to a float64 reference? One TF32 product ("1xTF32", what TF32 mode does) is
// timed as the speed ceiling. This is the data for the open decision on gemm-4096 (docs/BENCHMARKS.md);
// nothing in autotune generates such kernels.
//
// The tensor core's additions into its accumulator are reported to truncate rather than round to
// nearest (Ootomo and Yokota, 2022; the first run of this program: 3xTF32 summed in the mma's
// accumulator was 8x further from float64 than the FMA kernels), so the kernels can also sum outside
// it, as those authors propose: each
// k-step's (or k-tile's) products are summed by the mma from zero and added into the float32
// accumulator with an FADD, which rounds to nearest.
//
// `tf32x3 DIR` writes A, B and every kernel's C to DIR as raw float32 for scripts/gemm4096/tf32x3.py,
// which computes the float64 reference and times torch.matmul on the same inputs.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "timing.cuh"
#include "helpers.inc"  // the generated kernel's helpers (scripts/gemm4096/variants build)
#include "v0_body.inc"  // the generated FMA kernel, k_generated

namespace {

__device__ __forceinline__ void CopyAsync16(float* dst, const float* src) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void CommitCopies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void WaitCopies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ uint32_t ToTf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// x = big + small, each representable in TF32 (small is what rounding x to TF32 left over).
template <int PASSES>
__device__ __forceinline__ void Split(float x, uint32_t& big, uint32_t& small) {
  big = ToTf32(x);
  if constexpr (PASSES == 3) small = ToTf32(x - __uint_as_float(big));
}

// d += a * b for one 16 x 8 x 8 TF32 tile (PTX fragment layouts of mma.m16n8k8 .tf32).
__device__ __forceinline__ void MmaTf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// C = A * B, all row-major, M % BM == N % BN == K % 32 == 0. Block tile BM x BN, k-tile 32 in STAGES
// cp.async stages; warps WARPS_M x WARPS_N, each a (BM / WARPS_M) x (BN / WARPS_N) tile of 16 x 8
// mma tiles. Within a k-tile the mma's k index is permuted (the sum does not care): at step s, lane
// (g, t)'s two k values are 8s + 2t and 8s + 2t + 1, so its A fragment of a row is one 64-bit shared
// load. Row pitches (BK + 8, BN + 4 floats) keep those loads and B's 32-bit ones free of bank conflicts.
template <int MT, int NT>
__device__ __forceinline__ void Zero(float (&acc)[MT][NT][4]) {
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;
}

template <int MT, int NT>
__device__ __forceinline__ void AddInto(float (&acc)[MT][NT][4], const float (&part)[MT][NT][4]) {
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] += part[i][j][e];
}

// The k-tile and the padded row pitches of the shared tiles (see k_tf32), and the bytes of all stages.
constexpr int kBk = 32;
__host__ __device__ constexpr int PitchA() { return kBk + 8; }
__host__ __device__ constexpr int PitchB(int bn) { return bn + 4; }
constexpr int SharedBytes(int bm, int bn, int stages) { return stages * (bm * PitchA() + kBk * PitchB(bn)) * 4; }

enum Sum { kInMma = 0, kPerStep = 1, kPerTile = 2 };  // where the products are summed (see the top)

template <int BM, int BN, int WARPS_M, int WARPS_N, int STAGES, int PASSES, int MIN_BLOCKS, int SUM>
__global__ void __launch_bounds__(WARPS_M* WARPS_N * 32, MIN_BLOCKS)
    k_tf32(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N, int K) {
  constexpr int BK = kBk, kThreads = WARPS_M * WARPS_N * 32;
  constexpr int kWarpM = BM / WARPS_M, kWarpN = BN / WARPS_N;
  constexpr int MT = kWarpM / 16, NT = kWarpN / 8;
  constexpr int LDA = PitchA(), LDB = PitchB(BN);
  constexpr int kStageA = BM * LDA, kStageB = BK * LDB;
  static_assert(BM * BK / 4 % kThreads == 0 && BK * BN / 4 % kThreads == 0, "whole 16-byte copies a thread");
  extern __shared__ __align__(16) float smem[];
  float* As = smem;
  float* Bs = smem + STAGES * kStageA;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

  auto fill = [&](int kt, int stage) {
    float* as = As + stage * kStageA;
    float* bs = Bs + stage * kStageB;
    const float* ag = A + static_cast<size_t>(bm) * K + kt * BK;
    const float* bg = B + static_cast<size_t>(kt) * BK * N + bn;
#pragma unroll
    for (int i = 0; i < BM * BK / 4 / kThreads; ++i) {
      const int c = tid + i * kThreads, r = c / (BK / 4), col = c % (BK / 4) * 4;
      CopyAsync16(as + r * LDA + col, ag + static_cast<size_t>(r) * K + col);
    }
#pragma unroll
    for (int i = 0; i < BK * BN / 4 / kThreads; ++i) {
      const int c = tid + i * kThreads, r = c / (BN / 4), col = c % (BN / 4) * 4;
      CopyAsync16(bs + r * LDB + col, bg + static_cast<size_t>(r) * N + col);
    }
  };

  float acc[MT][NT][4];
  Zero(acc);

  const int kTiles = K / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < kTiles) fill(s, s);
    CommitCopies();
  }
  for (int kt = 0; kt < kTiles; ++kt) {
    float tile_acc[SUM == kPerTile ? MT : 1][SUM == kPerTile ? NT : 1][4];
    if constexpr (SUM == kPerTile) Zero(tile_acc);
    WaitCopies<STAGES - 2>();  // k-tile kt has landed
    __syncthreads();           // ... for every thread, and k-tile kt - 1's slot is no longer read
    if (kt + STAGES - 1 < kTiles) fill(kt + STAGES - 1, (kt + STAGES - 1) % STAGES);
    CommitCopies();
    const float* as = As + (kt % STAGES) * kStageA + (wm * kWarpM + g) * LDA + 2 * t;
    const float* bs = Bs + (kt % STAGES) * kStageB + 2 * t * LDB + wn * kWarpN + g;
#pragma unroll
    for (int s = 0; s < BK / 8; ++s) {
      uint32_t a_big[MT][4], a_small[MT][4], b_big[NT][2], b_small[NT][2];
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const float2 top = *reinterpret_cast<const float2*>(as + (i * 16) * LDA + 8 * s);
        const float2 bottom = *reinterpret_cast<const float2*>(as + (i * 16 + 8) * LDA + 8 * s);
        Split<PASSES>(top.x, a_big[i][0], a_small[i][0]);
        Split<PASSES>(bottom.x, a_big[i][1], a_small[i][1]);
        Split<PASSES>(top.y, a_big[i][2], a_small[i][2]);
        Split<PASSES>(bottom.y, a_big[i][3], a_small[i][3]);
      }
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        Split<PASSES>(bs[(8 * s) * LDB + j * 8], b_big[j][0], b_small[j][0]);
        Split<PASSES>(bs[(8 * s + 1) * LDB + j * 8], b_big[j][1], b_small[j][1]);
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          float step_acc[4] = {0.f, 0.f, 0.f, 0.f};
          float(&sum)[4] = SUM == kInMma ? acc[i][j] : SUM == kPerStep ? step_acc : tile_acc[SUM == kPerTile ? i : 0][SUM == kPerTile ? j : 0];
          if constexpr (PASSES == 3) {  // the small products first, so they are not lost in the big one
            MmaTf32(sum, a_small[i], b_big[j]);
            MmaTf32(sum, a_big[i], b_small[j]);
          }
          MmaTf32(sum, a_big[i], b_big[j]);
          if constexpr (SUM == kPerStep) {
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] += step_acc[e];
          }
        }
    }
    if constexpr (SUM == kPerTile) AddInto(acc, tile_acc);
  }
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int row = bm + wm * kWarpM + i * 16 + g, col = bn + wn * kWarpN + j * 8 + 2 * t;
      *reinterpret_cast<float2*>(C + static_cast<size_t>(row) * N + col) = make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(C + static_cast<size_t>(row + 8) * N + col) =
          make_float2(acc[i][j][2], acc[i][j][3]);
    }
}

struct Variant {
  std::string name, file;
  void (*kernel)(const float*, const float*, float*, int, int);
  dim3 grid, block;
  int smem;
};

template <int BM, int BN, int WM, int WN, int STAGES, int PASSES, int MINB, int SUM = kInMma>
Variant Tf32(const std::string& name, const std::string& file, int n) {
  const int smem = SharedBytes(BM, BN, STAGES);
  return {name, file, k_tf32<BM, BN, WM, WN, STAGES, PASSES, MINB, SUM>, dim3(n / BN, n / BM), dim3(WM * WN * 32), smem};
}

void Save(const std::string& path, const float* device, size_t n) {
  std::vector<float> h(n);
  Check(cudaMemcpy(h.data(), device, n * 4, cudaMemcpyDeviceToHost), "copy back");
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(h.data(), 4, n, f) != n || std::fclose(f) != 0) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tf32x3 DIR   (writes A.bin, B.bin and C_<variant>.bin there)\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int n = 4096;
  const size_t elems = static_cast<size_t>(n) * n;
  std::vector<float> h(elems);
  float *A, *B, *C;
  unsigned char* flush;
  Check(cudaMalloc(&A, elems * 4), "malloc");
  Check(cudaMalloc(&B, elems * 4), "malloc");
  Check(cudaMalloc(&C, elems * 4), "malloc");
  Check(cudaMalloc(&flush, 256 << 20), "malloc");
  srand(1);
  FillUniform(h);
  Check(cudaMemcpy(A, h.data(), elems * 4, cudaMemcpyHostToDevice), "copy");
  Save(dir + "/A.bin", A, elems);
  FillUniform(h);
  Check(cudaMemcpy(B, h.data(), elems * 4, cudaMemcpyHostToDevice), "copy");
  Save(dir + "/B.bin", B, elems);

  std::vector<Variant> variants = {
      Tf32<128, 128, 2, 4, 3, 3, 1>("3xTF32 128x128, 8 warps of 64x32, 3 stages", "C_3x_128x128_w8.bin", n),
      Tf32<128, 128, 2, 4, 4, 3, 1>("3xTF32 128x128, 8 warps of 64x32, 4 stages", "C_3x_128x128_w8s4.bin", n),
      Tf32<128, 128, 2, 2, 3, 3, 1>("3xTF32 128x128, 4 warps of 64x64, 3 stages", "C_3x_128x128_w4.bin", n),
      Tf32<128, 256, 2, 4, 2, 3, 1>("3xTF32 128x256, 8 warps of 64x64, 2 stages", "C_3x_128x256_w8.bin", n),
      Tf32<256, 128, 4, 2, 2, 3, 1>("3xTF32 256x128, 8 warps of 64x64, 2 stages", "C_3x_256x128_w8.bin", n),
      Tf32<128, 128, 2, 4, 3, 3, 2>("3xTF32 128x128, 8 warps of 64x32, 3 st., minb 2", "C_3x_128x128_w8m2.bin", n),
      Tf32<256, 128, 4, 2, 2, 3, 1, kPerStep>("3xTF32 256x128 w8 64x64, 2 st., sum per k-step", "C_3x_256x128_w8_step.bin", n),
      Tf32<128, 128, 2, 2, 3, 3, 1, kPerStep>("3xTF32 128x128 w4 64x64, 3 st., sum per k-step", "C_3x_128x128_w4_step.bin", n),
      Tf32<128, 128, 2, 4, 3, 3, 1, kPerStep>("3xTF32 128x128 w8 64x32, 3 st., sum per k-step", "C_3x_128x128_w8_step.bin", n),
      Tf32<128, 128, 2, 4, 3, 3, 1, kPerTile>("3xTF32 128x128 w8 64x32, 3 st., sum per k-tile", "C_3x_128x128_w8_tile.bin", n),
      Tf32<128, 128, 4, 2, 3, 3, 1, kPerTile>("3xTF32 128x128 w8 32x64, 3 st., sum per k-tile", "C_3x_128x128_w8t_tile.bin", n),
      Tf32<128, 128, 2, 4, 3, 1, 2>("1xTF32 128x128, 8 warps of 64x32, 3 st., minb 2", "C_1x_128x128_w8m2.bin", n),
      Tf32<128, 128, 2, 2, 3, 1, 1>("1xTF32 128x128, 4 warps of 64x64, 3 stages", "C_1x_128x128_w4.bin", n),
  };
  // The generated FMA kernel (autotune's tuned gemm-4096 schedule), timed first, same method.
  {
    Check(cudaFuncSetAttribute(k_generated, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536), "attr");
    Check(cudaMemset(C, 0, elems * 4), "clear");
    k_generated<<<1024, 128, 65536>>>(A, B, C);
    Check(cudaDeviceSynchronize(), "generated");
    Save(dir + "/C_generated.bin", C, elems);
    const double med = MedianMs([&] { k_generated<<<1024, 128, 65536>>>(A, B, C); }, flush, "generated");
    cudaFuncAttributes fa;
    Check(cudaFuncGetAttributes(&fa, k_generated), "attrs");
    int blocks = 0;
    Check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_generated, 128, 65536), "occupancy");
    std::printf("%-46s regs %3d  blocks/SM %d  median %.4f ms  %6.1f TFLOP/s  -> C_generated.bin\n",
                "generated FMA kernel (autotune)", fa.numRegs, blocks, med, 2.0 * elems * n / med / 1e9);
  }
  for (const Variant& v : variants) {
    Check(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem), v.name.c_str());
    int blocks = 0;
    Check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, v.kernel, v.block.x, v.smem), "occupancy");
    cudaFuncAttributes fa;
    Check(cudaFuncGetAttributes(&fa, v.kernel), "attrs");
    Check(cudaMemset(C, 0, elems * 4), "clear");
    v.kernel<<<v.grid, v.block, v.smem>>>(A, B, C, n, n);
    Check(cudaDeviceSynchronize(), v.name.c_str());
    Save(dir + "/" + v.file, C, elems);
    const double med = MedianMs([&] { v.kernel<<<v.grid, v.block, v.smem>>>(A, B, C, n, n); }, flush, v.name.c_str());
    std::printf("%-46s regs %3d  blocks/SM %d  median %.4f ms  %6.1f TFLOP/s  spills %zu B  -> %s\n",
                v.name.c_str(), fa.numRegs, blocks, med, 2.0 * elems * n / med / 1e9, fa.localSizeBytes,
                v.file.c_str());
  }
  return 0;
}
