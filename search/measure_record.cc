#include "search/measure_record.h"

#include <fmt/format.h>

#include <cmath>

#include "measure/cpu_isa.h"
#include "measure/host_info.h"
#include "tir/version.h"

namespace autotune::search {

db::TargetInfo CpuTargetInfo(const measure::MeasureConfig& config) {
  // The architecture is the instruction set built for ("avx512"), which a query such as cpu:avx2 names.
  auto isa = measure::ResolveCpuIsa(config.cpu_isa);
  const std::string arch = isa ? isa->name : config.cpu_isa;
  return db::TargetInfo{"cpu", arch, measure::HostCpuModel(), "", measure::CCompilerVersion(config.cc)};
}

db::TargetInfo CudaTargetInfo(const measure::CudaDeviceInfo& device, const std::string& nvrtc_version) {
  return db::TargetInfo{"cuda", device.Arch(), device.name,
                        fmt::format("{}.{}", device.driver_version / 1000, device.driver_version % 1000 / 10),
                        nvrtc_version};
}

TraceIdentity IdentityOf(const tir::Trace& trace) {
  TraceIdentity id{trace.ToJsonText(), ""};
  id.hash = db::HashTraceJson(id.json);
  return id;
}

db::TuningRecord MakeTuningRecord(const tir::Workload& workload, const tir::Trace& trace, const db::TargetInfo& target,
                                  const measure::MeasureResult& result, const measure::BuildResult* build) {
  db::TuningRecord r;
  r.workload = db::WorkloadInfo::From(workload);
  r.target = target;
  TraceIdentity id = IdentityOf(trace);
  r.trace_json = std::move(id.json);
  r.trace_hash = std::move(id.hash);
  r.trace_format_version = tir::kTraceFormatVersion;
  r.latencies_ms = result.latencies_ms;
  r.correct = result.correct;
  if (std::isfinite(result.max_rel_error) && (result.ok() || result.error_kind == measure::ErrorKind::kWrongAnswer)) {
    r.max_rel_error = result.max_rel_error;
  }
  r.error_kind = measure::ErrorKindName(result.error_kind);
  r.error_message = result.error_message;
  if (result.ok()) {
    r.median_ms = result.median_ms;
    r.gflops = result.median_ms > 0 ? workload.flops / (result.median_ms * 1e6) : 0;
  }
  r.measured_at = db::NowIso8601();
  r.autotune_version = kVersion;
  nlohmann::json info = {{"spread", result.spread}, {"build_s", result.build_seconds}, {"run_s", result.run_seconds}};
  if (result.build_cpu_seconds > 0) info["build_cpu_s"] = result.build_cpu_seconds;
  if (result.timed_seconds > 0) info["timed_s"] = result.timed_seconds;
  if (build && build->ok() && target.kind == "cuda") {
    info["registers"] = build->registers;
    info["spill_bytes"] = build->spill_bytes;
    info["kernels"] = build->kernels.size();
  }
  r.info_json = info.dump();
  return r;
}

}  // namespace autotune::search
