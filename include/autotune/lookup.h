/* autotune lookup library: the best tuned kernel for an operator, shape and target, from an autotune
 * tuning database, for compilers and runtimes that do not run autotune themselves.
 *
 *   autotune_db* db;
 *   if (autotune_db_open("autotune.db", &db) != AUTOTUNE_OK) { puts(autotune_last_error()); ... }
 *   const autotune_kernel* k;
 *   if (autotune_lookup(db, "gemm", "M=1024,N=1024,K=1024", "", "cuda:sm_90",
 *                       AUTOTUNE_LOOKUP_NEAREST, &k) == AUTOTUNE_OK) {
 *     compile autotune_kernel_source(k) (NVRTC for "cuda", a C compiler with OpenMP for "c"),
 *     then launch autotune_kernel_entry(k, i) with its grid, block and dynamic shared memory for
 *     i = 0 .. autotune_kernel_num_launches(k) - 1, passing the inputs, the output and the
 *     workspaces as pointers (float32, row-major, in the layout `autotune ops` documents).
 *   }
 *   autotune_db_close(db);
 *
 * Stability: a C ABI. Functions are only added, never changed; AUTOTUNE_LOOKUP_ABI_VERSION grows when
 * one is added. Structures are opaque.
 * Threads: every function may be called from any thread at once, except that autotune_db_close must
 * not race with calls on the same handle.
 * Lifetimes: strings and kernels returned are owned by the database handle and valid until
 * autotune_db_close. The handle reads the database once, at open: records written later are seen by
 * a handle opened later.
 * Speed: each distinct query is answered once (replay, lowering and code generation) and then from
 * memory, by a hash lookup.
 */
#ifndef AUTOTUNE_LOOKUP_H_
#define AUTOTUNE_LOOKUP_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define AUTOTUNE_API __attribute__((visibility("default")))
#else
#define AUTOTUNE_API
#endif

#define AUTOTUNE_LOOKUP_ABI_VERSION 5

typedef struct autotune_db autotune_db;
typedef struct autotune_kernel autotune_kernel;
typedef struct autotune_module autotune_module;

typedef enum autotune_status {
  AUTOTUNE_OK = 0,
  AUTOTUNE_NOT_FOUND = 1,        /* no record for the query (nor, with NEAREST, one that transfers) */
  AUTOTUNE_INVALID_ARGUMENT = 2, /* unknown operator or target, malformed shape, null pointer */
  AUTOTUNE_DB_ERROR = 3,         /* the database cannot be opened or read */
  AUTOTUNE_INTERNAL_ERROR = 4,   /* a bug: please report autotune_last_error() */
  AUTOTUNE_RUNTIME_ERROR = 5     /* ABI 3: a kernel could not be compiled, loaded or launched here */
} autotune_status;

/* Flags of autotune_lookup. */
#define AUTOTUNE_LOOKUP_EXACT 0u
#define AUTOTUNE_LOOKUP_NEAREST 1u /* without an exact record, adapt the best traces of nearby shapes */

/* AUTOTUNE_LOOKUP_ABI_VERSION of the library loaded (may exceed the header's). */
AUTOTUNE_API int autotune_lookup_abi_version(void);
/* The autotune version, "0.1.0". */
AUTOTUNE_API const char* autotune_version(void);
/* Why the last call that failed on this thread failed: one line, valid until the thread's next call. */
AUTOTUNE_API const char* autotune_last_error(void);

/* Opens a tuning database read-only (it is never written) and loads its best records. */
AUTOTUNE_API autotune_status autotune_db_open(const char* path, autotune_db** out);
/* Frees the handle and every kernel and string it returned. Null is allowed. */
AUTOTUNE_API void autotune_db_close(autotune_db* db);
/* Records loaded (the best few of every workload and target). */
AUTOTUNE_API int64_t autotune_db_num_records(const autotune_db* db);

/* The best kernel for operator `op` ("gemm", "batch_matmul", "conv1d", "conv2d", "conv3d",
 * "conv2d_transpose", "capsule_conv2d", "softmax", "layer_norm", "rms_norm", "norm") at `shape`
 * ("M=1024,N=1024,K=1024"; parameters and defaults as `autotune ops` lists them), with the fused
 * `epilogue` (the row operators softmax to norm take none; NULL or "" for none, else its parts in the order they
 * apply: "bias", "bias,relu", "scale,shift,residual,relu", ...; the parts are bias, scale, shift,
 * residual, relu, relu6, gelu, gelu_tanh and silu, and the kernel takes the inputs of bias, scale,
 * shift and residual after the operator's own, in that order), on `target` ("cuda", "cuda:sm_90",
 * "cpu"). On AUTOTUNE_OK, *out is set; otherwise *out is NULL and autotune_last_error() says why. */
AUTOTUNE_API autotune_status autotune_lookup(autotune_db* db, const char* op, const char* shape, const char* epilogue,
                                             const char* target, unsigned flags, const autotune_kernel** out);

/* ABI version 2. As autotune_lookup, for tensors of element type `dtype`: "float32", "float16" or
 * "bfloat16" (NULL means "float32", what autotune_lookup answers). A 16-bit kernel takes its
 * tensors as 16-bit values and accumulates in float32. "tf32" and "3xtf32" ask for a float32 gemm or
 * batch_matmul computed at that precision (TF32 tensor cores; three TF32 products for float32's
 * accuracy): float32 tensors, and only such a record answers, never one for "float32". */
AUTOTUNE_API autotune_status autotune_lookup_dtype(autotune_db* db, const char* op, const char* shape,
                                                   const char* epilogue, const char* dtype, const char* target,
                                                   unsigned flags, const autotune_kernel** out);

/* 1: from a record of exactly this workload; 0: approximate (a trace of a nearby shape, replayed). */
AUTOTUNE_API int autotune_kernel_is_exact(const autotune_kernel* k);
/* "cuda" (CUDA C++) or "c" (C11; parallel loops use OpenMP pragmas). */
AUTOTUNE_API const char* autotune_kernel_language(const autotune_kernel* k);
AUTOTUNE_API const char* autotune_kernel_source(const autotune_kernel* k);
/* Kernels to launch, in order (c: 1, a function called once). */
AUTOTUNE_API int autotune_kernel_num_launches(const autotune_kernel* k);
/* Entry point (extern "C" symbol) of launch i; NULL when i is out of range. */
AUTOTUNE_API const char* autotune_kernel_entry(const autotune_kernel* k, int launch);
/* Grid and block dimensions (x, y, z) of launch i; {1,1,1} for c and for an index out of range. */
AUTOTUNE_API void autotune_kernel_grid(const autotune_kernel* k, int launch, int64_t dims[3]);
AUTOTUNE_API void autotune_kernel_block(const autotune_kernel* k, int launch, int64_t dims[3]);
/* Dynamic shared memory bytes of launch i (0: the kernel's shared memory is static). */
AUTOTUNE_API int64_t autotune_kernel_dynamic_shared_bytes(const autotune_kernel* k, int launch);
/* Pointer parameters of every kernel: num_params tensors (inputs, then the outputs), then
 * num_workspaces scratch buffers of autotune_kernel_workspace_bytes(k, i) bytes each. */
AUTOTUNE_API int autotune_kernel_num_params(const autotune_kernel* k);
AUTOTUNE_API int autotune_kernel_num_workspaces(const autotune_kernel* k);
AUTOTUNE_API int64_t autotune_kernel_workspace_bytes(const autotune_kernel* k, int workspace);
/* The measured median latency (ms) and throughput (GFLOP/s) of the record used, at its own shape. */
AUTOTUNE_API double autotune_kernel_latency_ms(const autotune_kernel* k);
AUTOTUNE_API double autotune_kernel_gflops(const autotune_kernel* k);
/* Exact: the latency; approximate: the requested FLOPs at the record's measured throughput. */
AUTOTUNE_API double autotune_kernel_estimated_latency_ms(const autotune_kernel* k);
/* The workload whose record was used ("gemm[M=1024,N=1024,K=512]"), and the target it was measured
 * on ("cuda:sm_90 (NVIDIA H200; driver 580.82; toolkit 13.0)"). */
AUTOTUNE_API const char* autotune_kernel_measured_workload(const autotune_kernel* k);
AUTOTUNE_API const char* autotune_kernel_target(const autotune_kernel* k);
/* The schedule as an autotune trace (JSON), as applied to the requested shape. */
AUTOTUNE_API const char* autotune_kernel_trace(const autotune_kernel* k);

/* ---- ABI version 3: running a kernel in this process ----------------------------------------------
 *
 *   autotune_module* m;
 *   if (autotune_module_load(k, &m) != AUTOTUNE_OK) { puts(autotune_last_error()); ... }
 *   void* tensors[] = {a, b, c};          inputs, then the output
 *   autotune_module_launch(m, tensors, 3, stream);
 *   autotune_module_free(m);
 *
 * A module is the kernel compiled as the tuner measured it (c: the system C compiler, or $CC, with
 * OpenMP and the tuner's flags; cuda: NVRTC for the device of the CUDA context current on the calling
 * thread, else device 0's primary context), the object cached on disk by content hash under
 * $XDG_CACHE_HOME/autotune (or $AUTOTUNE_CACHE_DIR; capped at $AUTOTUNE_CACHE_MAX_MB, default 2048).
 * A module owns its workspaces and outlives the database handle. Tensors are contiguous, row-major,
 * of the workload's element type, each start aligned to autotune_kernel_pointer_alignment(k) bytes
 * (what the kernel was measured with; a misaligned pointer is refused, never run). */

/* The kernel's tensors, i = 0 .. autotune_kernel_num_params(k) - 1 (the inputs, then the outputs):
 * name ("A"), element type ("float32", "float16", "bfloat16"), rank and dimensions (row-major).
 * NULL / 0 for an index out of range. */
AUTOTUNE_API const char* autotune_kernel_tensor_name(const autotune_kernel* k, int tensor);
AUTOTUNE_API const char* autotune_kernel_tensor_dtype(const autotune_kernel* k, int tensor);
AUTOTUNE_API int autotune_kernel_tensor_rank(const autotune_kernel* k, int tensor);
AUTOTUNE_API int64_t autotune_kernel_tensor_dim(const autotune_kernel* k, int tensor, int dim);
/* The alignment (bytes) every tensor pointer must have: 64 for c, 256 for cuda. */
AUTOTUNE_API int64_t autotune_kernel_pointer_alignment(const autotune_kernel* k);
/* Compiles (or finds in the cache) and loads k's kernel. AUTOTUNE_RUNTIME_ERROR when it cannot here
 * (no C compiler, no GPU, driver or NVRTC for cuda). */
AUTOTUNE_API autotune_status autotune_module_load(const autotune_kernel* k, autotune_module** out);
/* Runs the kernel on `tensors` (autotune_kernel_num_params of them: inputs, then the outputs; host
 * pointers for c, device pointers for cuda). cuda: enqueued on `stream` (a CUstream, NULL for the
 * default stream), not waited for; c: runs to completion on this thread and OpenMP's, `stream` must
 * be NULL. Launches on one module must not overlap in time (they share its workspaces).
 * AUTOTUNE_INVALID_ARGUMENT for a wrong count, a null or misaligned pointer. */
AUTOTUNE_API autotune_status autotune_module_launch(autotune_module* m, void* const* tensors, int num_tensors,
                                                    void* stream);
/* The compiler command (c) or NVRTC options (cuda) the module was built with. */
AUTOTUNE_API const char* autotune_module_build_options(const autotune_module* m);
/* Unloads the module and frees its workspaces. Null is allowed. */
AUTOTUNE_API void autotune_module_free(autotune_module* m);

/* ---- ABI version 4: inputs packed once ------------------------------------------------------------
 *
 * A c kernel may take some inputs (a convolution's weights) packed into a layout of its own, made by
 * a pack function of its source, as the tuner measured it: packing is not part of the timed call,
 * just as a library reorders weights once. autotune_module_launch packs them on every call (right,
 * but it re-lays the weights out each time); a client whose weights do not change packs them once:
 *
 *   for (int i = 0; i < autotune_kernel_num_packed(k); ++i) {
 *     int t = autotune_kernel_packed_tensor(k, i);        which of the kernel's tensors
 *     allocate packed[i]: the product of autotune_kernel_packed_dim(k, i, d) elements of tensor t's
 *       type, aligned as autotune_kernel_pointer_alignment(k) says;
 *     autotune_module_pack(m, i, tensors[t], packed[i]);
 *   }
 *   then, per call, tensors[t] replaced by packed[i]: autotune_module_launch_packed(m, tensors, n, NULL);
 *
 * A client compiling the source itself calls `void <pack entry>(const T* tensor, T* packed)` once and
 * passes the packed tensor to the entry in tensor t's place. */

/* Inputs the kernel takes packed (0 for most kernels, and for cuda). */
AUTOTUNE_API int autotune_kernel_num_packed(const autotune_kernel* k);
/* The tensor (index of autotune_kernel_tensor_*) that pack i replaces; -1 for an index out of range. */
AUTOTUNE_API int autotune_kernel_packed_tensor(const autotune_kernel* k, int pack);
/* The symbol of pack i's function in autotune_kernel_source; NULL out of range. */
AUTOTUNE_API const char* autotune_kernel_pack_entry(const autotune_kernel* k, int pack);
/* Rank and dimensions (row-major) of pack i's tensor; 0 out of range. */
AUTOTUNE_API int autotune_kernel_packed_rank(const autotune_kernel* k, int pack);
AUTOTUNE_API int64_t autotune_kernel_packed_dim(const autotune_kernel* k, int pack, int dim);
/* Makes pack i's tensor from `tensor` (the workload's, unchanged) into `packed`, both aligned host
 * pointers. AUTOTUNE_INVALID_ARGUMENT for an index out of range or a null or misaligned pointer. */
AUTOTUNE_API autotune_status autotune_module_pack(autotune_module* m, int pack, const void* tensor, void* packed);
/* As autotune_module_launch, with every packed input's tensor replaced by its packed tensor. */
AUTOTUNE_API autotune_status autotune_module_launch_packed(autotune_module* m, void* const* tensors, int num_tensors,
                                                           void* stream);

/* ---- ABI version 5: several outputs ---------------------------------------------------------------
 *
 * The kernel's last autotune_kernel_num_outputs(k) tensors are what it writes: 1 for most operators;
 * add_rms_norm and add_layer_norm write 2, the residual sum ("sum") and then the normalized output.
 * No output may overlap an input (the residual is not updated in place). */
AUTOTUNE_API int autotune_kernel_num_outputs(const autotune_kernel* k);

#ifdef __cplusplus
}
#endif

#endif /* AUTOTUNE_LOOKUP_H_ */
