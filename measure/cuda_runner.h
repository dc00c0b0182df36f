// CUDA runner: runs built candidates (cubins from the NVRTC builder) on the GPU through a supervised
// executor process (measure/cuda_executor.h has the method and the protocol), so a kernel that
// faults (RUN_ERROR naming the CUDA error, e.g. CUDA_ERROR_ILLEGAL_ADDRESS) or hangs (RUN_TIMEOUT
// past config.run_timeout_s) only costs a restart of the executor, and the next candidates are
// measured on a fresh one.
//
// Data: random inputs, uniform in [-1, 1), from MakeRandomInputs with config.seed (the same as every
// runner), copied to the GPU once per workload. The reference is the unscheduled compute, run on the
// same GPU: NaiveGpuSchedule (one output element per thread, reductions serial), lowered, generated
// and compiled with the same NVRTC path, run once per workload. A workload without a compute
// definition (hand-made test workloads) uses its host reference instead (double accumulation).
// Outputs are compared on the host with config.rtol (WRONG_ANSWER with the max relative error).
//
// The runner's process never initializes CUDA (so it may fork). One Run at a time per runner.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/cuda_driver.h"
#include "measure/cuda_executor.h"
#include "measure/measure_config.h"
#include "measure/nvrtc_builder.h"
#include "measure/repeat_screen.h"
#include "measure/runner.h"
#include "measure/workload_data.h"

namespace autotune::measure {

class CudaRunner : public Runner {
 public:
  explicit CudaRunner(MeasureConfig config);
  std::vector<MeasureResult> Run(const tir::Workload& workload, const std::vector<BuildResult>& builds) override;
  void SetScreening(bool on) override { screen_.Enable(on); }

  // The GPU the kernels run on (starts the executor), or why there is none.
  Result<CudaDeviceInfo> Device() { return executor_.Start(); }
  // Executor processes started so far: 1 unless a candidate killed one.
  int ExecutorStarts() const { return executor_.starts(); }

 private:
  // Gives the executor the workload (and builds its reference kernel), once per workload.
  Result<void> PrepareWorkload(const tir::Workload& workload);
  Result<CudaModuleRun> BuildReference(const tir::Workload& workload, const CudaDeviceInfo& device);

  MeasureConfig config_;
  CudaExecutor executor_;
  std::unique_ptr<NvrtcBuilder> reference_builder_;
  WorkloadDataCache host_data_;
  std::string workload_key_;                  // the workload last prepared
  std::optional<std::string> workload_error_;  // why it cannot be measured
  RepeatScreen screen_;
};

std::unique_ptr<Runner> MakeCudaRunner(const MeasureConfig& config);

}  // namespace autotune::measure
