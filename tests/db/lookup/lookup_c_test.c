/* The lookup library through its C header, from C: exact and nearest answers, targets, errors, and
 * the returned CPU kernels compiled with the system C compiler and checked against a naive gemm.
 * Usage: lookup_c_test FIXTURE_DB SCRATCH_DIR (the database written by make_lookup_db). */
#define _POSIX_C_SOURCE 200809L
#include <autotune/lookup.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                \
  do {                                                             \
    if (!(cond)) {                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                  \
    }                                                              \
  } while (0)

typedef void (*gemm_fn)(float*, float*, float*);

/* Compiles a "c" kernel as a shared library, runs it on random inputs and compares with a naive
 * double-accumulating gemm of M x K times K x N. Returns 1 when every element is within tolerance. */
static int RunsCorrectly(const autotune_kernel* k, const char* dir, const char* name, int M, int N, int K) {
  char src[512], lib[512], cmd[2048];
  snprintf(src, sizeof src, "%s/%s.c", dir, name);
  snprintf(lib, sizeof lib, "%s/%s.so", dir, name);
  FILE* f = fopen(src, "w");
  if (!f) return 0;
  fputs(autotune_kernel_source(k), f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "cc -O2 -fopenmp -fPIC -shared -std=c11 -o %s %s", lib, src);
  if (system(cmd) != 0) return 0;
  void* handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!handle) return 0;
  gemm_fn fn = (gemm_fn)dlsym(handle, autotune_kernel_entry(k, 0));
  if (!fn) return 0;
  float* a = malloc(sizeof(float) * M * K);
  float* b = malloc(sizeof(float) * K * N);
  float* c = malloc(sizeof(float) * M * N);
  srand(7);
  for (int i = 0; i < M * K; ++i) a[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < M * N; ++i) c[i] = NAN;
  fn(a, b, c);
  int ok = 1;
  for (int i = 0; i < M && ok; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int kk = 0; kk < K; ++kk) want += (double)a[i * K + kk] * b[kk * N + j];
      if (!(fabs(c[i * N + j] - want) <= 1e-4 * (1 + fabs(want)))) {
        fprintf(stderr, "%s: C[%d,%d] = %g, want %g\n", name, i, j, c[i * N + j], want);
        ok = 0;
        break;
      }
    }
  }
  free(a);
  free(b);
  free(c);
  /* No dlclose: the kernel brought libgomp in, and unloading it under its idle worker threads
   * would pull their code away. */
  return ok;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: lookup_c_test FIXTURE_DB SCRATCH_DIR\n");
    return 2;
  }
  CHECK(autotune_lookup_abi_version() >= AUTOTUNE_LOOKUP_ABI_VERSION);
  CHECK(strlen(autotune_version()) > 0);

  autotune_db* db = NULL;
  CHECK(autotune_db_open("/nonexistent/autotune.db", &db) == AUTOTUNE_DB_ERROR);
  CHECK(db == NULL && strlen(autotune_last_error()) > 0);
  if (autotune_db_open(argv[1], &db) != AUTOTUNE_OK) {
    fprintf(stderr, "open: %s\n", autotune_last_error());
    return 1;
  }
  CHECK(autotune_db_num_records(db) > 0);

  /* Exact, cpu: the fastest valid record (0.2 ms), not the faster wrong answer. */
  const autotune_kernel* k = NULL;
  CHECK(autotune_lookup(db, "gemm", "M=64,N=64,K=64", "", "cpu", AUTOTUNE_LOOKUP_EXACT, &k) == AUTOTUNE_OK);
  if (k) {
    CHECK(autotune_kernel_is_exact(k) == 1);
    CHECK(strcmp(autotune_kernel_language(k), "c") == 0);
    CHECK(autotune_kernel_num_launches(k) == 1);
    CHECK(autotune_kernel_num_params(k) == 3);
    CHECK(autotune_kernel_num_outputs(k) == 1);
    CHECK(autotune_kernel_num_workspaces(k) == 0);
    CHECK(fabs(autotune_kernel_latency_ms(k) - 0.2) < 1e-12);
    CHECK(strcmp(autotune_kernel_measured_workload(k), "gemm[M=64,N=64,K=64]") == 0);
    CHECK(strstr(autotune_kernel_source(k), autotune_kernel_entry(k, 0)) != NULL);
    CHECK(autotune_kernel_entry(k, 1) == NULL);
    CHECK(strstr(autotune_kernel_trace(k), "sample_perfect_tile") != NULL);
    CHECK(RunsCorrectly(k, argv[2], "exact_gemm", 64, 64, 64));
    /* The same query again is the same answer object. */
    const autotune_kernel* again = NULL;
    CHECK(autotune_lookup(db, "gemm", "K=64,N=64,M=64", NULL, "cpu", 0, &again) == AUTOTUNE_OK);
    CHECK(again == k);
  }

  /* Several outputs (ABI 5): add_rms_norm's kernel writes the sum, then Y, its last two tensors. */
  const autotune_kernel* two = NULL;
  CHECK(autotune_lookup(db, "add_rms_norm", "M=4,N=48", "", "cpu", AUTOTUNE_LOOKUP_EXACT, &two) == AUTOTUNE_OK);
  if (two) {
    CHECK(autotune_kernel_num_params(two) == 5);
    CHECK(autotune_kernel_num_outputs(two) == 2);
    CHECK(strcmp(autotune_kernel_tensor_name(two, 3), "sum") == 0);
    CHECK(strcmp(autotune_kernel_tensor_name(two, 4), "Y") == 0);
  }

  /* Element types (ABI 2): NULL is float32; a float16 query gets the float16 record only. */
  const autotune_kernel* typed = NULL;
  CHECK(autotune_lookup_dtype(db, "gemm", "M=64,N=64,K=64", "", NULL, "cpu", 0, &typed) == AUTOTUNE_OK);
  CHECK(typed == k);
  CHECK(autotune_lookup_dtype(db, "gemm", "M=64,N=64,K=64", "", "float16", "cpu", 0, &typed) == AUTOTUNE_OK);
  if (typed) {
    CHECK(strcmp(autotune_kernel_measured_workload(typed), "gemm[M=64,N=64,K=64]:float16") == 0);
    CHECK(fabs(autotune_kernel_latency_ms(typed) - 0.1) < 1e-12);
    CHECK(strstr(autotune_kernel_source(typed), "uint16_t") != NULL);
  }
  CHECK(autotune_lookup_dtype(db, "gemm", "M=64,N=64,K=64", "", "bfloat16", "cpu", 0, &typed) == AUTOTUNE_NOT_FOUND);
  /* A precision is a type of its own: the TF32 record answers "tf32" only, never float32 nor 3xtf32. */
  CHECK(autotune_lookup_dtype(db, "gemm", "M=64,N=64,K=64", "", "tf32", "cpu", 0, &typed) == AUTOTUNE_OK);
  if (typed) CHECK(strcmp(autotune_kernel_measured_workload(typed), "gemm[M=64,N=64,K=64]:tf32") == 0);
  CHECK(autotune_lookup_dtype(db, "gemm", "M=64,N=64,K=64", "", "3xtf32", "cpu", 0, &typed) == AUTOTUNE_NOT_FOUND);
  CHECK(autotune_lookup_dtype(db, "gemm", "M=64,N=64,K=64", "", "float8", "cpu", 0, &typed) ==
        AUTOTUNE_INVALID_ARGUMENT);
  CHECK(typed == NULL && strstr(autotune_last_error(), "unknown element type 'float8'") != NULL);

  /* No record of this shape: not found exactly, approximate with NEAREST, and still correct. */
  CHECK(autotune_lookup(db, "gemm", "M=96,N=80,K=64", "", "cpu", AUTOTUNE_LOOKUP_EXACT, &k) == AUTOTUNE_NOT_FOUND);
  CHECK(k == NULL && strstr(autotune_last_error(), "no valid record") != NULL);
  CHECK(autotune_lookup(db, "gemm", "M=96,N=80,K=64", "", "cpu", AUTOTUNE_LOOKUP_NEAREST, &k) == AUTOTUNE_OK);
  if (k) {
    CHECK(autotune_kernel_is_exact(k) == 0);
    CHECK(strncmp(autotune_kernel_measured_workload(k), "gemm[", 5) == 0);
    CHECK(strcmp(autotune_kernel_measured_workload(k), "gemm[M=96,N=80,K=64]") != 0);
    CHECK(autotune_kernel_estimated_latency_ms(k) > 0);
    CHECK(RunsCorrectly(k, argv[2], "nearest_gemm", 96, 80, 64));
  }

  /* cuda: the architecture selects the record; "cuda" alone takes the fastest of any GPU. */
  CHECK(autotune_lookup(db, "gemm", "M=256,N=256,K=256", "", "cuda:sm_90", 0, &k) == AUTOTUNE_OK);
  if (k) {
    int64_t grid[3], block[3];
    autotune_kernel_grid(k, 0, grid);
    autotune_kernel_block(k, 0, block);
    CHECK(strcmp(autotune_kernel_language(k), "cuda") == 0);
    CHECK(autotune_kernel_num_launches(k) >= 1);
    CHECK(grid[0] * grid[1] * grid[2] >= 1 && block[0] * block[1] * block[2] >= 1);
    CHECK(autotune_kernel_dynamic_shared_bytes(k, 0) >= 0);
    CHECK(strstr(autotune_kernel_source(k), "__global__") != NULL);
    CHECK(fabs(autotune_kernel_latency_ms(k) - 0.02) < 1e-12);
    CHECK(strstr(autotune_kernel_target(k), "NVIDIA H200") != NULL);
  }
  CHECK(autotune_lookup(db, "gemm", "M=256,N=256,K=256", "", "cuda:sm_80", 0, &k) == AUTOTUNE_OK);
  CHECK(k && fabs(autotune_kernel_latency_ms(k) - 0.03) < 1e-12);
  CHECK(autotune_lookup(db, "gemm", "M=256,N=256,K=256", "", "cuda", 0, &k) == AUTOTUNE_OK);
  CHECK(k && fabs(autotune_kernel_latency_ms(k) - 0.02) < 1e-12);
  CHECK(autotune_lookup(db, "gemm", "M=512,N=512,K=512", "", "cuda:sm_90", AUTOTUNE_LOOKUP_NEAREST, &k) == AUTOTUNE_OK);
  CHECK(k && autotune_kernel_is_exact(k) == 0);
  CHECK(autotune_lookup(db, "conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", "", "cuda:sm_90", 0, &k) == AUTOTUNE_OK);
  CHECK(autotune_lookup(db, "conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", "relu", "cuda:sm_90",
                        AUTOTUNE_LOOKUP_NEAREST, &k) == AUTOTUNE_NOT_FOUND);
  CHECK(autotune_lookup(db, "batch_matmul", "B=2,M=64,N=64,K=64", "", "cpu", AUTOTUNE_LOOKUP_NEAREST, &k) ==
        AUTOTUNE_NOT_FOUND);

  /* Bad input: one clear message, no answer, no crash. */
  CHECK(autotune_lookup(db, "softmax", "N=4", "", "cpu", 0, &k) == AUTOTUNE_INVALID_ARGUMENT && k == NULL);
  CHECK(strstr(autotune_last_error(), "softmax") != NULL);
  CHECK(autotune_lookup(db, "gemm", "M=abc", "", "cpu", 0, &k) == AUTOTUNE_INVALID_ARGUMENT);
  CHECK(autotune_lookup(db, "gemm", "M=64,N=64,K=64", "", "tpu", 0, &k) == AUTOTUNE_INVALID_ARGUMENT);
  CHECK(autotune_lookup(db, "gemm", "M=64,N=64,K=64", "gelu6", "cpu", 0, &k) == AUTOTUNE_INVALID_ARGUMENT);
  CHECK(strstr(autotune_last_error(), "gelu6") != NULL);
  /* A valid epilogue with no record is not found, never the record of another epilogue. */
  CHECK(autotune_lookup(db, "gemm", "M=64,N=64,K=64", "bias,gelu", "cpu", 0, &k) == AUTOTUNE_NOT_FOUND && k == NULL);
  CHECK(autotune_lookup(db, "gemm", "M=64,N=64,K=64", "", "cpu", 8u, &k) == AUTOTUNE_INVALID_ARGUMENT);
  CHECK(autotune_lookup(NULL, "gemm", "M=64", "", "cpu", 0, &k) == AUTOTUNE_INVALID_ARGUMENT);
  CHECK(autotune_lookup(db, NULL, "M=64", "", "cpu", 0, &k) == AUTOTUNE_INVALID_ARGUMENT);
  CHECK(autotune_kernel_source(NULL) == NULL && autotune_kernel_num_launches(NULL) == 0);

  autotune_db_close(db);
  autotune_db_close(NULL);
  if (failures) fprintf(stderr, "%d checks failed\n", failures);
  else printf("lookup_c_test: all checks passed\n");
  return failures ? 1 : 0;
}
