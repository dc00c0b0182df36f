// A batch-1 3x3 convolution (NCHW, padding 1, C to C channels) written by hand the way oneDNN
// computes it on AVX-512: 32 output channels in two vectors, a row of up to 14 output columns,
// 28 accumulators in registers; each input value broadcast against two weight vectors, on weights
// packed as [K/32][C][3][3][32]: the hand-written model of cpu.registers' channel-vector kernels
// (docs/DESIGN.md "Vector code on the CPU"), timed pre-packed and with the packing in every call.
// One output is checked against a sum in double.
//
//   gcc -O3 -march=native -mprefer-vector-width=512 -fopenmp -DC_=256 -DH_=14 \
//       bench/cpu_conv_channel_tiles.c -o conv && ./conv
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <omp.h>
#ifndef C_
#define C_ 256
#define H_ 14
#endif
#define K_ C_
#define W_ H_
#define HP (H_ + 2)
#define WP (W_ + 2)
#define QT (W_ > 14 ? 14 : W_)
// packed weights: [K/32][C][3][3][32]
static void pack(const float* w, float* wp) {
  #pragma omp parallel for
  for (int kb = 0; kb < K_ / 32; ++kb)
    for (int c = 0; c < C_; ++c)
      for (int rs = 0; rs < 9; ++rs)
        for (int kk = 0; kk < 32; ++kk)
          wp[(((size_t)kb * C_ + c) * 9 + rs) * 32 + kk] = w[((size_t)(kb * 32 + kk) * C_ + c) * 9 + rs];
}
static void padin(const float* x, float* xp) {
  #pragma omp parallel for
  for (int c = 0; c < C_; ++c) {
    memset(xp + (size_t)c * HP * WP, 0, sizeof(float) * HP * WP);
    for (int h = 0; h < H_; ++h) memcpy(xp + ((size_t)c * HP + h + 1) * WP + 1, x + ((size_t)c * H_ + h) * W_, sizeof(float) * W_);
  }
}
static void conv(const float* xp, const float* wp, float* y) {
  #pragma omp parallel for collapse(2)
  for (int kb = 0; kb < K_ / 32; ++kb)
    for (int p = 0; p < H_; ++p)
      for (int q0 = 0; q0 < W_; q0 += QT) {
        __m512 acc[QT][2];
        for (int j = 0; j < QT; ++j) acc[j][0] = acc[j][1] = _mm512_setzero_ps();
        for (int c = 0; c < C_; ++c)
          for (int r = 0; r < 3; ++r)
            for (int s = 0; s < 3; ++s) {
              const float* wv = wp + (((size_t)kb * C_ + c) * 9 + r * 3 + s) * 32;
              __m512 w0 = _mm512_loadu_ps(wv), w1 = _mm512_loadu_ps(wv + 16);
              const float* xr = xp + ((size_t)c * HP + p + r) * WP + q0 + s;
              #pragma GCC unroll 14
              for (int j = 0; j < QT; ++j) {
                __m512 xv = _mm512_set1_ps(xr[j]);
                acc[j][0] = _mm512_fmadd_ps(xv, w0, acc[j][0]);
                acc[j][1] = _mm512_fmadd_ps(xv, w1, acc[j][1]);
              }
            }
        float tmp[2][16][QT];
        for (int j = 0; j < QT; ++j) {
          float t0[16], t1[16];
          _mm512_storeu_ps(t0, acc[j][0]); _mm512_storeu_ps(t1, acc[j][1]);
          for (int kk = 0; kk < 16; ++kk) { tmp[0][kk][j] = t0[kk]; tmp[1][kk][j] = t1[kk]; }
        }
        for (int h = 0; h < 2; ++h)
          for (int kk = 0; kk < 16; ++kk)
            memcpy(y + ((size_t)(kb * 32 + h * 16 + kk) * H_ + p) * W_ + q0, tmp[h][kk], sizeof(float) * QT);
      }
}
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main() {
  float* x = aligned_alloc(64, sizeof(float) * C_ * H_ * W_);
  float* w = aligned_alloc(64, sizeof(float) * K_ * C_ * 9);
  float* wp = aligned_alloc(64, sizeof(float) * K_ * C_ * 9);
  float* xp = aligned_alloc(64, sizeof(float) * C_ * HP * WP + 64);
  float* y = aligned_alloc(64, sizeof(float) * K_ * H_ * W_);
  for (size_t i = 0; i < (size_t)C_ * H_ * W_; ++i) x[i] = (float)rand() / RAND_MAX - 0.5f;
  for (size_t i = 0; i < (size_t)K_ * C_ * 9; ++i) w[i] = (float)rand() / RAND_MAX - 0.5f;
  // check one output
  pack(w, wp); padin(x, xp); conv(xp, wp, y);
  double ref = 0; int k = 5, p = H_ / 2, q = W_ / 2;
  for (int c = 0; c < C_; ++c) for (int r = 0; r < 3; ++r) for (int s = 0; s < 3; ++s) {
    int h = p + r - 1, ww = q + s - 1; if (h < 0 || h >= H_ || ww < 0 || ww >= W_) continue;
    ref += (double)x[((size_t)c * H_ + h) * W_ + ww] * w[((size_t)k * C_ + c) * 9 + r * 3 + s]; }
  const double got = y[((size_t)k * H_ + p) * W_ + q];
  if (fabs(got - ref) > 1e-4 * (fabs(ref) + 1)) {
    printf("wrong answer: %g, expected %g\n", got, ref);
    return 1;
  }
  double flops = 2.0 * K_ * C_ * 9 * H_ * W_;
  for (int mode = 0; mode < 2; ++mode) {
    double best = 1e9;
    for (int rep = 0; rep < 7; ++rep) {
      double t0 = now(); int n = 20;
      for (int i = 0; i < n; ++i) { if (mode) pack(w, wp); padin(x, xp); conv(xp, wp, y); }
      double ms = (now() - t0) / n; if (ms < best) best = ms;
    }
    printf("C=%d H=%d %s: %.4f ms, %.0f GFLOP/s\n", C_, H_, mode ? "packing each call" : "pre-packed", best, flops / best / 1e6);
  }
}
