// CPU runner: runs each candidate's shared object in a forked child process, so a kernel that
// crashes or hangs only kills the child (RUN_ERROR naming the signal, RUN_TIMEOUT past the limit).
//
// The child sees the parent's inputs and reference copy-on-write (no copies), dlopens the object,
// poisons the output with NaN, runs once (writing the output to config.save_output as .npy when set)
// and checks against the reference (WRONG_ANSWER stops there), runs `warmup` untimed times (none when one run already outlasts min_repeat_ms: the checked
// run warmed it), then `repeats` timed repeats, each running the kernel enough
// times to last min_repeat_ms on the steady clock, with the caches flushed before each repeat by
// reading a buffer larger than the last-level cache (a first repeat well above the workload's best
// so far is the only one: measure/repeat_screen.h). Results come back through a pipe.
//
// Fork is safe because the parent never initializes OpenMP (only children load the kernels and
// libgomp). Do not call Run while another thread of the process is inside dlopen. One Run at a time
// per runner: candidates are timed one after another, so they do not disturb each other.
#pragma once

#include <memory>
#include <vector>

#include "measure/measure_config.h"
#include "measure/repeat_screen.h"
#include "measure/runner.h"
#include "measure/workload_data.h"

namespace autotune::measure {

class CpuRunner : public Runner {
 public:
  explicit CpuRunner(MeasureConfig config);
  std::vector<MeasureResult> Run(const tir::Workload& workload, const std::vector<BuildResult>& builds) override;
  void SetScreening(bool on) override { screen_.Enable(on); }

 private:
  // stop_above_ms: the screen's limit for this candidate (measure/repeat_screen.h).
  MeasureResult RunOne(const tir::Workload& workload, const WorkloadData& data, const BuildResult& build,
                       double stop_above_ms);
  const char* FlushBuffer();

  MeasureConfig config_;
  WorkloadDataCache data_cache_;
  AlignedFloats flush_;  // read by the children between repeats
  RepeatScreen screen_;
};

std::unique_ptr<Runner> MakeCpuRunner(const MeasureConfig& config);

}  // namespace autotune::measure
