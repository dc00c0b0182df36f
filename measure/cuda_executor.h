// The CUDA executor: the one process that touches the GPU. A kernel that faults (illegal address,
// misaligned access) leaves its CUDA context unusable, and a kernel that hangs never returns, so
// kernels do not run in the tuner's process: CudaExecutor forks a child once, which initializes
// CUDA, keeps the workload's data on the GPU and runs candidate after candidate; the parent sends
// requests and waits for each answer with a time limit.
//
//   parent (never initializes CUDA)                 executor child (owns the CUDA context)
//   fork  ───────────────────────────────────────►  load libcuda, open the device, make a stream,
//         ◄─────────────── ready {device info}      events and the L2 flush buffer
//   workload {inputs, seed, reference module} ───►  random inputs -> GPU; the reference module run
//         ◄─────────────── {ok} or {error}          once (or the host reference received) -> host
//   run {cubin, kernels, workspaces, stop} ──────►  load, poison, run, check, warm up, time
//         ◄──── {kind, message, rel. error, ms}     (fatal: the context is broken, it exits)
//
// Messages are frames on a socket pair: a header (magic, JSON length, blob length), JSON text, and
// a binary blob (the host reference, when there is one). When the executor faults it answers with
// the CUDA error and, if the context is broken (a sticky error), exits; a crash or a hang is seen by
// the parent as a closed socket or a missed deadline, and the process is killed (SIGKILL) and
// reaped. The next request starts a fresh executor, which gets the workload again before its first
// run. The executor exits when the parent closes the socket, or dies (it watches its parent).
//
// Method of a run: load the cubin; kernels whose dynamic shared memory is above 48 KB get
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; workspaces are allocated; the inputs are copied
// again from a pristine copy on the GPU (a previous candidate that wrote out of bounds into an
// input's allocation cannot spoil the next ones' data; after a failed candidate the pristine copy
// itself is refreshed from the executor's host copy first); the output is poisoned
// with NaN (cuMemsetD32 of 0x7fff7fff, a NaN in every element type) and the module run once (all its kernels in order are one run),
// copied back (and written to config.save_output as .npy when set: measure/io_dump.h) and checked
// against the reference on the host (measure/reference_check.h;
// WRONG_ANSWER stops there); then `warmup` untimed runs (none when one run already outlasts
// min_repeat_ms), then `repeats` repeats, each of N runs lasting at least min_repeat_ms, timed with
// CUDA events, with the L2 flushed before each repeat by writing a buffer of 2 x the L2 size with
// cuMemsetD8 on the same stream (a first repeat above the request's stop_above_ms is the only
// one: measure/repeat_screen.h). The output is copied back into page-locked memory. Every CUDA call is checked; an error is RUN_ERROR naming the CUDA
// error and the call (e.g. "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered
// (cuStreamSynchronize after the checked run)").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/builder.h"
#include "measure/cuda_driver.h"
#include "measure/measure_config.h"
#include "measure/measure_result.h"
#include "measure/workload_data.h"
#include "tir/codegen/cuda_module.h"
#include "support/result.h"

namespace autotune::measure {

// A built module and how to launch it.
struct CudaModuleRun {
  std::string cubin_path;
  std::vector<tir::CudaKernelLaunch> kernels;
  std::vector<int64_t> workspace_bytes;
  static CudaModuleRun FromBuild(const BuildResult& build);
};

// What the executor needs of a workload: the sizes and element types of its buffers, how to make the
// inputs (MakeRandomInputs with `seed`, rounded to their types), and where the reference output comes
// from. 16-bit tensors live on the GPU as the kernels read them; the output is widened to float32 on
// the host before the check (measure/kernel_tensor.h).
struct CudaWorkloadSpec {
  std::string key;  // the workload's identity (a new key means new data)
  std::vector<int64_t> input_elements;
  std::vector<tir::DType> input_types;  // one per input
  std::vector<int64_t> output_elements;  // of each output (Workload::Outputs)
  tir::DType output_type = tir::DType::kFloat32;
  double extra_rtol = 0;  // added to the check's rtol (PrecisionTolerance of the workload)
  uint64_t seed = 1;
  // The reference: this module (the unscheduled compute, writing the output's type) run once on the
  // GPU, or else the float32 host reference of `host_data` (computed on the CPU from the same inputs).
  std::optional<CudaModuleRun> reference;
  std::shared_ptr<const WorkloadData> host_data;
};

struct CudaRunOutcome {
  ErrorKind kind = ErrorKind::kNone;  // kNone, kRunError, kRunTimeout or kWrongAnswer
  std::string message;
  double max_rel_error = 0;          // of the checked run (infinite: NaN or unwritten elements)
  std::vector<double> latencies_ms;  // one per repeat (empty unless kind is kNone)
  double timed_seconds = 0;          // wall time of the warm-up and timed repeats in the executor
};

class CudaExecutor {
 public:
  // config: timing, limits, rtol, seed and cuda_device; flush_bytes 0 is 2 x the L2 size.
  explicit CudaExecutor(MeasureConfig config);
  ~CudaExecutor();  // ends the executor process
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  // Starts the executor if it is not running: the device it opened, or why it could not ("no CUDA
  // driver (libcuda.so.1) on this machine", "no CUDA device").
  Result<CudaDeviceInfo> Start();
  // The workload of the following runs; given to the executor before its next run (and again after
  // every restart). A workload whose setup failed fails every run with that error, until the next
  // SetWorkload with another key.
  void SetWorkload(CudaWorkloadSpec spec);
  // Runs, checks and times one module on the current workload. A fault, a crash or a hang is an
  // outcome (RUN_ERROR, RUN_TIMEOUT), and the next call runs on a fresh executor. A first timed
  // repeat above stop_above_ms (> 0) is the only one (measure/repeat_screen.h).
  CudaRunOutcome Run(const CudaModuleRun& module, double stop_above_ms = 0);
  // Ends the executor process (the next call starts one).
  void Stop();

  bool running() const { return pid_ > 0; }
  int starts() const { return starts_; }  // executor processes started so far

 private:
  enum class Wait { kOk, kTimeout, kClosed };
  struct Frame;
  Wait Request(const std::string& json, const std::string& blob, double timeout_s, Frame& reply);
  Result<void> SendWorkload();
  void Kill();                                // SIGKILL and reap
  std::string Reap(double grace_s);           // wait for a process that is exiting; how it ended

  MeasureConfig config_;
  pid_t pid_ = -1;
  int fd_ = -1;
  int starts_ = 0;
  std::optional<CudaDeviceInfo> device_;
  std::optional<CudaWorkloadSpec> workload_;
  bool workload_sent_ = false;           // the running executor has the workload
  std::optional<std::string> workload_error_;  // its setup failed: every run fails with this
};

}  // namespace autotune::measure
