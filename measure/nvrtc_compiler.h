// NVRTC: CUDA C++ source -> cubin for one GPU architecture, in process or in a forked child with a
// time limit (an NVRTC call cannot be interrupted in its thread).
//
// NVRTC is loaded at run time (dlopen), not linked, like the driver: a binary built here starts on
// any machine, and on a GPU machine it uses that machine's toolkit (a bundle for a remote GPU
// machine relies on the NVRTC installed there, whatever its version). The library is searched as
// libnvrtc.so, libnvrtc.so.13, .so.12, .so.11.2 (the dynamic loader's path: LD_LIBRARY_PATH, the
// ld.so cache), then the library CMake found at build time (AUTOTUNE_NVRTC_LIBRARY), then
// /usr/local/cuda/lib64. Without one, building for cuda is a BUILD_ERROR that says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "measure/measure_config.h"
#include "support/result.h"

struct _nvrtcProgram;  // nvrtc.h's opaque program type

namespace autotune::measure {

// NVRTC's entry points (named after nvrtc.h without the "nvrtc" prefix).
struct Nvrtc {
  using Program = _nvrtcProgram*;
  using Status = int;  // nvrtcResult: 0 is NVRTC_SUCCESS, 6 NVRTC_ERROR_COMPILATION
  static constexpr Status kSuccess = 0;
  static constexpr Status kErrorCompilation = 6;

  Status (*Version)(int* major, int* minor);
  const char* (*GetErrorString)(Status status);
  Status (*CreateProgram)(Program* program, const char* source, const char* name, int num_headers,
                          const char* const* headers, const char* const* include_names);
  Status (*DestroyProgram)(Program* program);
  Status (*CompileProgram)(Program program, int num_options, const char* const* options);
  Status (*GetProgramLogSize)(Program program, size_t* size);
  Status (*GetProgramLog)(Program program, char* log);
  Status (*GetCUBINSize)(Program program, size_t* size);
  Status (*GetCUBIN)(Program program, char* cubin);

  std::string library;  // the file it was loaded from
  int major = 0, minor = 0;
  std::string VersionText() const;  // "13.0"
};

// Loads NVRTC once per process (later calls return the same table or the same error).
Result<const Nvrtc*> LoadNvrtc();

// "sm_90" from "sm_90", "90" or "compute_90"-less spellings ("sm_90a" stays); an error for anything else.
Result<std::string> NormalizeCudaArch(const std::string& arch);

// The NVRTC options for `arch` (normalized): a cubin for that architecture (--gpu-architecture=sm_XY
// makes NVRTC run ptxas), device code with no __device__ needed (-default-device), C++17, and
// ptxas's resource report in the log (--ptxas-options=-v). Optimization is NVRTC's default (device
// optimization on, ptxas -O3); FMA contraction stays on (the default, as on the cpu target); no
// --use_fast_math (approximate division and square root, flushed denormals: results must stay
// checkable). -lineinfo and config.nvrtc_options are added when asked for.
std::vector<std::string> NvrtcOptions(const std::string& arch, const MeasureConfig& config);

struct NvrtcOutput {
  enum class Status {
    kOk,            // cubin is set
    kCompileError,  // the source does not compile: see log
    kTimeout,       // the compile ran past the time limit and was killed
    kFailed,        // NVRTC itself failed or crashed: see message
  };
  Status status = Status::kFailed;
  std::string log;      // NVRTC's program log (errors, warnings, ptxas info)
  std::string cubin;
  std::string message;  // kTimeout, kFailed: what happened
  double seconds = 0;
  double cpu_seconds = 0;  // CompileToCubinIsolated: the compiling process's CPU time
};

// Compiles in this thread.
NvrtcOutput CompileToCubin(const Nvrtc& nvrtc, const std::string& source, const std::vector<std::string>& options);

// Compiles in a process of its own, killed past `cpu_limit_s` seconds of CPU time or kWallLimitFactor
// times that in wall time (kTimeout): the CPU limit is the same on a loaded machine as on an idle
// one, the wall limit only catches a process starved or stuck. The process runs at a nice value
// kCompileNice higher than ours: while a tuning job proposes its next candidates (the job's critical
// path) the compiles of the rounds in flight take the CPU time the search leaves.
//
// The process is the helper executable autotune-nvrtc (NvrtcHelperPath) when there is one, else a
// fork of this process (`nvrtc` must then be loaded here before, LoadNvrtc, so the child only calls
// into it). The helper is the better choice for a large, busy process such as a tuning job: every
// fork marks all of the parent's memory copy-on-write, and while forked children live the parent's
// threads fault on the pages they write. Offline, 16 idle children kept alive by forking (about 20
// forks a second, as 16 compilers do) made the search of conv2d c512-h7-n16 2x slower (sys time
// 1.4 -> 37-50 s); a helper started with posix_spawn shares nothing.
inline constexpr double kWallLimitFactor = 4;
inline constexpr int kCompileNice = 10;
NvrtcOutput CompileToCubinIsolated(const Nvrtc& nvrtc, const std::string& source,
                                   const std::vector<std::string>& options, double cpu_limit_s);

// The helper: its file name, and its path: $AUTOTUNE_NVRTC_HELPER when set ("" there: no helper),
// else autotune-nvrtc next to this executable if it is there, else "" (decided once per process).
inline constexpr const char* kNvrtcHelperName = "autotune-nvrtc";
const std::string& NvrtcHelperPath();

// CompileToCubinIsolated with the helper at `helper`: a process of the pool of helpers that stay
// (measure/nvrtc_helper_pool.h), run as `helper --serve NICE` (measure/nvrtc_helper_main.cc).
NvrtcOutput CompileToCubinInHelper(const std::string& helper, const std::string& source,
                                   const std::vector<std::string>& options, double cpu_limit_s);

// The compiling process's answer, as it writes it: a status byte, the log's (or for a failure, the
// message's) size and text, then the cubin.
std::string EncodeNvrtcOutput(const NvrtcOutput& out);

// What ptxas -v reports, over all kernels of a module:
//   ptxas info    : Compiling entry function 'k' for 'sm_90'
//   ptxas         .     0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
//   ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem
struct PtxasInfo {
  int kernels = 0;                // entry functions reported
  int registers = 0;              // the most registers per thread of any kernel
  int64_t spill_store_bytes = 0;  // summed over kernels
  int64_t spill_load_bytes = 0;
  int64_t stack_frame_bytes = 0;  // the largest stack frame of any kernel (local arrays, spills)
};
PtxasInfo ParsePtxasInfo(const std::string& log);

}  // namespace autotune::measure
