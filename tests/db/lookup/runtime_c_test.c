/* The lookup library's runtime (ABI 3 and 4) from C: a cpu kernel loaded and launched on aligned arrays
 * gives a naive gemm's answer; a wrong tensor count, a null, a misaligned pointer and a stream for a
 * cpu kernel are refused with a message; a module outlives its database; a cuda kernel's load fails
 * cleanly where there is no GPU (and is skipped where there is one: the GPU tests run it). A
 * convolution whose weights the kernel takes packed gives the reference's answer both ways: launched
 * with the weights as they are (packed on every call) and with the weights packed once.
 * Usage: runtime_c_test FIXTURE_DB (the database written by make_lookup_db). */
#define _POSIX_C_SOURCE 200809L
#include <autotune/lookup.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s (%s)\n", __FILE__, __LINE__, #cond, autotune_last_error()); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

enum { M = 64, N = 64, K = 64 };

/* Every element of c within tolerance of the double-accumulated a x b. */
static int GemmMatches(const float* a, const float* b, const float* c) {
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int kk = 0; kk < K; ++kk) want += (double)a[i * K + kk] * b[kk * N + j];
      if (!(fabs(c[i * N + j] - want) <= 1e-4 * (1 + fabs(want)))) {
        fprintf(stderr, "C[%d,%d] = %g, want %g\n", i, j, c[i * N + j], want);
        return 0;
      }
    }
  }
  return 1;
}

static void CpuKernelRuns(autotune_db* db) {
  const autotune_kernel* k = NULL;
  CHECK(autotune_lookup(db, "gemm", "M=64,N=64,K=64", "", "cpu", 0, &k) == AUTOTUNE_OK);
  if (!k) return;
  const int64_t align = autotune_kernel_pointer_alignment(k);
  CHECK(align == 64);
  CHECK(strcmp(autotune_kernel_tensor_name(k, 0), "A") == 0 && strcmp(autotune_kernel_tensor_dtype(k, 2), "float32") == 0);
  CHECK(autotune_kernel_tensor_rank(k, 1) == 2 && autotune_kernel_tensor_dim(k, 1, 0) == K && autotune_kernel_tensor_dim(k, 2, 1) == N);
  CHECK(autotune_kernel_tensor_name(k, 3) == NULL && autotune_kernel_tensor_dim(k, 0, 2) == 0);
  autotune_module* m = NULL;
  CHECK(autotune_module_load(k, &m) == AUTOTUNE_OK);
  if (!m) return;
  CHECK(strstr(autotune_module_build_options(m), "-fopenmp") != NULL);
  autotune_db_close(db); /* the module needs the handle no more */
  float* a = aligned_alloc(64, sizeof(float) * (M * K + 16));
  float* b = aligned_alloc(64, sizeof(float) * K * N);
  float* c = aligned_alloc(64, sizeof(float) * M * N);
  srand(3);
  for (int i = 0; i < M * K; ++i) a[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < M * N; ++i) c[i] = NAN;
  void* tensors[3] = {a, b, c};
  CHECK(autotune_module_launch(m, tensors, 3, NULL) == AUTOTUNE_OK);
  CHECK(GemmMatches(a, b, c));

  CHECK(autotune_module_launch(m, tensors, 2, NULL) == AUTOTUNE_INVALID_ARGUMENT);
  CHECK(strstr(autotune_last_error(), "takes 3 tensors") != NULL);
  void* with_null[3] = {a, NULL, c};
  CHECK(autotune_module_launch(m, with_null, 3, NULL) == AUTOTUNE_INVALID_ARGUMENT);
  CHECK(strstr(autotune_last_error(), "tensor 1 is a null pointer") != NULL);
  void* misaligned[3] = {a + 1, b, c};
  CHECK(autotune_module_launch(m, misaligned, 3, NULL) == AUTOTUNE_INVALID_ARGUMENT);
  CHECK(strstr(autotune_last_error(), "tensor 0 is not 64-byte aligned") != NULL);
  CHECK(autotune_module_launch(m, tensors, 3, (void*)c) == AUTOTUNE_RUNTIME_ERROR);
  CHECK(strstr(autotune_last_error(), "no stream") != NULL);
  CHECK(autotune_module_launch(NULL, tensors, 3, NULL) == AUTOTUNE_INVALID_ARGUMENT);
  autotune_module_free(m);
  autotune_module_free(NULL);
  free(a);
  free(b);
  free(c);
}

enum { CC = 16, HW = 14, KK = 32 }; /* the fixture's conv2d: N=1, 3x3, pad 1 */

static int ConvMatches(const float* x, const float* w, const float* y) {
  for (int k = 0; k < KK; ++k) {
    for (int p = 0; p < HW; ++p) {
      for (int q = 0; q < HW; ++q) {
        double want = 0;
        for (int c = 0; c < CC; ++c) {
          for (int r = 0; r < 3; ++r) {
            for (int s = 0; s < 3; ++s) {
              const int h = p + r - 1, v = q + s - 1;
              if (h >= 0 && h < HW && v >= 0 && v < HW) want += (double)x[(c * HW + h) * HW + v] * w[((k * CC + c) * 3 + r) * 3 + s];
            }
          }
        }
        const float got = y[(k * HW + p) * HW + q];
        if (!(fabs(got - want) <= 1e-4 * (1 + fabs(want)))) {
          fprintf(stderr, "Y[%d,%d,%d] = %g, want %g\n", k, p, q, got, want);
          return 0;
        }
      }
    }
  }
  return 1;
}

static float* RandomArray(int64_t n) {
  float* a = aligned_alloc(64, (size_t)((n * 4 + 63) / 64 * 64));
  for (int64_t i = 0; i < n; ++i) a[i] = (float)rand() / RAND_MAX - 0.5f;
  return a;
}

static void PackedConvolutionRuns(autotune_db* db) {
  const autotune_kernel* k = NULL;
  CHECK(autotune_lookup(db, "conv2d", "N=1,C=16,H=14,W=14,K=32,R=3,S=3,pad=1", "", "cpu", 0, &k) == AUTOTUNE_OK);
  if (!k) return;
  CHECK(autotune_kernel_num_packed(k) == 1 && autotune_kernel_packed_tensor(k, 0) == 1);
  CHECK(autotune_kernel_packed_tensor(k, 1) == -1 && autotune_kernel_pack_entry(k, 1) == NULL);
  CHECK(strstr(autotune_kernel_source(k), autotune_kernel_pack_entry(k, 0)) != NULL);
  const int rank = autotune_kernel_packed_rank(k, 0);
  int64_t packed_elements = 1;
  for (int d = 0; d < rank; ++d) packed_elements *= autotune_kernel_packed_dim(k, 0, d);
  CHECK(rank == 5 && packed_elements == KK * CC * 9); /* K/f x C x R x S x f: f divides K */
  autotune_module* m = NULL;
  CHECK(autotune_module_load(k, &m) == AUTOTUNE_OK);
  if (!m) return;
  float* x = RandomArray(CC * HW * HW);
  float* w = RandomArray(KK * CC * 9);
  float* y = RandomArray(KK * HW * HW);
  float* packed = RandomArray(packed_elements);
  void* tensors[3] = {x, w, y};
  CHECK(autotune_module_launch(m, tensors, 3, NULL) == AUTOTUNE_OK);
  CHECK(ConvMatches(x, w, y));
  CHECK(autotune_module_pack(m, 0, w, packed) == AUTOTUNE_OK);
  float* w_again = RandomArray(KK * CC * 9);
  memcpy(w_again, w, sizeof(float) * KK * CC * 9);
  memset(w, 0, sizeof(float) * KK * CC * 9); /* the packed launch must not read the weights */
  for (int i = 0; i < KK * HW * HW; ++i) y[i] = NAN;
  void* packed_tensors[3] = {x, packed, y};
  CHECK(autotune_module_launch_packed(m, packed_tensors, 3, NULL) == AUTOTUNE_OK);
  CHECK(ConvMatches(x, w_again, y));
  CHECK(autotune_module_pack(m, 1, w_again, packed) == AUTOTUNE_INVALID_ARGUMENT);
  CHECK(strstr(autotune_last_error(), "no pack 1") != NULL);
  CHECK(autotune_module_pack(m, 0, w_again, (float*)packed + 1) == AUTOTUNE_INVALID_ARGUMENT);
  autotune_module_free(m);
  free(x);
  free(w);
  free(w_again);
  free(y);
  free(packed);
}

static void CudaKernelLoadFailsCleanlyWithoutAGpu(autotune_db* db) {
  const autotune_kernel* k = NULL;
  CHECK(autotune_lookup(db, "gemm", "M=256,N=256,K=256", "", "cuda", 0, &k) == AUTOTUNE_OK);
  if (!k) return;
  CHECK(autotune_kernel_pointer_alignment(k) == 256);
  autotune_module* m = NULL;
  const autotune_status s = autotune_module_load(k, &m);
  if (s == AUTOTUNE_OK) { /* a GPU: the GPU tests launch it */
    autotune_module_free(m);
    return;
  }
  CHECK(s == AUTOTUNE_RUNTIME_ERROR && m == NULL);
  CHECK(strlen(autotune_last_error()) > 0 && strchr(autotune_last_error(), '\n') == NULL);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: runtime_c_test FIXTURE_DB\n");
    return 2;
  }
  CHECK(autotune_lookup_abi_version() >= 4);
  autotune_db* db = NULL;
  if (autotune_db_open(argv[1], &db) != AUTOTUNE_OK) {
    fprintf(stderr, "open: %s\n", autotune_last_error());
    return 1;
  }
  CudaKernelLoadFailsCleanlyWithoutAGpu(db);
  PackedConvolutionRuns(db);
  CpuKernelRuns(db); /* closes db */
  autotune_module* m = NULL;
  CHECK(autotune_module_load(NULL, &m) == AUTOTUNE_INVALID_ARGUMENT && m == NULL);
  if (failures) fprintf(stderr, "runtime_c_test: %d checks failed\n", failures);
  return failures ? 1 : 0;
}
