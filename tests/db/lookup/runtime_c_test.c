/* The lookup library's runtime (ABI 3) from C: a cpu kernel loaded and launched on aligned arrays
 * gives a naive gemm's answer; a wrong tensor count, a null, a misaligned pointer and a stream for a
 * cpu kernel are refused with a message; a module outlives its database; a cuda kernel's load fails
 * cleanly where there is no GPU (and is skipped where there is one: the GPU tests run it).
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
  CHECK(autotune_lookup_abi_version() >= 3);
  autotune_db* db = NULL;
  if (autotune_db_open(argv[1], &db) != AUTOTUNE_OK) {
    fprintf(stderr, "open: %s\n", autotune_last_error());
    return 1;
  }
  CudaKernelLoadFailsCleanlyWithoutAGpu(db);
  CpuKernelRuns(db); /* closes db */
  autotune_module* m = NULL;
  CHECK(autotune_module_load(NULL, &m) == AUTOTUNE_INVALID_ARGUMENT && m == NULL);
  if (failures) fprintf(stderr, "runtime_c_test: %d checks failed\n", failures);
  return failures ? 1 : 0;
}
