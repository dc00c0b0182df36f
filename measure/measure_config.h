// How candidates are built and timed. Filled from flags by the CLI; the defaults suit the cpu target.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace autotune::measure {

struct MeasureConfig {
  // ---- timing ----
  int warmup = 1;             // untimed runs after the checked run (caches, OpenMP thread pool)
  int repeats = 3;            // timed repeats; the median is the figure, all are kept
  double min_repeat_ms = 20;  // each repeat runs the kernel enough times to last at least this long
  double screen_ratio = 0;    // a first repeat above this x the workload's best median so far ends the
                              // timing (measure/repeat_screen.h); 0: every candidate gets all repeats
  bool flush_cache = true;    // evict the caches before each repeat (cpu: read a buffer; cuda: write one)
  int64_t flush_bytes = 0;    // size of that buffer; 0: cpu 1.5 x the last-level cache (at least 8 MiB),
                              // cuda 2 x the L2 size

  // ---- limits ----
  double build_timeout_s = 60;  // per candidate; the compiler is killed past it (BUILD_TIMEOUT). cuda: CPU
                                // seconds of the compile (wall time: 4x), cpu: wall seconds
  double run_timeout_s = 30;    // per candidate, check and all repeats included (RUN_TIMEOUT)

  // ---- correctness ----
  double rtol = 1e-4;  // allowed relative error, see measure/reference_check.h
  uint64_t seed = 1;   // seed of the random inputs

  // ---- cpu target ----
  int build_threads = 0;     // compilers run at once (cpu and cuda); 0: number of hardware threads
  int num_threads = 0;       // OpenMP threads of a cpu kernel; 0: OpenMP's default (all cores)
  bool pin_threads = true;   // pin a cpu kernel's threads, one per allowed CPU (measure/thread_pinning.h)
  std::string cache_dir;     // built artifacts by hash; "": measure::DefaultCacheDir (build_cache.h)
  std::string cc = "cc";     // the C compiler
  std::vector<std::string> extra_cflags;
  std::string cpu_isa;       // the instruction set built for (measure/cpu_isa.h); "": this host's own

  // ---- saving the outputs (autotune measure --save-io; measure/io_dump.h) ----
  // The outputs of the checked run are written as .npy (float32, C order), output i (in argument
  // order: Workload::Outputs) to save_outputs[i] with its shape, by the process that ran it, whatever
  // the verdict. Empty: not written (the tuner's case: no cost).
  struct SavedOutput {
    std::string path;
    std::vector<int64_t> shape;
  };
  std::vector<SavedOutput> save_outputs;

  // ---- cuda target ----
  std::string cuda_arch;  // "sm_90" (or "90"); "": read from device `cuda_device` (fails without a GPU: pass --arch)
  int cuda_device = 0;    // ordinal of the GPU that runs the kernels
  bool cuda_lineinfo = false;               // NVRTC -lineinfo (for profilers; no effect on speed)
  bool cuda_graph = false;  // each timed repeat replays its runs captured in a CUDA graph: no per-launch
                            // gaps, as in a compiled model's graph (kernels of a few microseconds)
  std::vector<std::string> nvrtc_options;   // appended to the NVRTC options
};

}  // namespace autotune::measure
