// From a measurement to a tuning record: the target description of this host or GPU, and the
// record of one measured (workload, trace). Every command that measures stores what it measured
// through here, so records from `measure`, `tune` and workers look the same.
#pragma once

#include "db/record.h"
#include "measure/builder.h"
#include "measure/cuda_driver.h"
#include "measure/measure_config.h"
#include "measure/measure_result.h"
#include "tir/schedule/trace.h"

namespace autotune::search {

// cpu: the machine architecture, the processor model and the C compiler's version line.
db::TargetInfo CpuTargetInfo(const measure::MeasureConfig& config);
// cuda: the GPU's architecture and name, the CUDA driver API version and NVRTC's version.
db::TargetInfo CudaTargetInfo(const measure::CudaDeviceInfo& device, const std::string& nvrtc_version);

// A trace's identity in the database and the search: its JSON text and that text's hash.
struct TraceIdentity {
  std::string json, hash;
};
TraceIdentity IdentityOf(const tir::Trace& trace);

// The record of one measurement. `build` (may be null) adds registers, spills and build time to info.
db::TuningRecord MakeTuningRecord(const tir::Workload& workload, const tir::Trace& trace, const db::TargetInfo& target,
                                  const measure::MeasureResult& result, const measure::BuildResult* build);

}  // namespace autotune::search
