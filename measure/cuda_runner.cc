#include "measure/cuda_runner.h"
#include "measure/reference_check.h"

#include <fmt/format.h>

#include <chrono>

#include "tir/lower/lower.h"
#include "tir/schedule/naive_gpu_schedule.h"

namespace autotune::measure {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

CudaRunner::CudaRunner(MeasureConfig config)
    : config_(std::move(config)), executor_(config_), screen_(config_.screen_ratio) {}

Result<CudaModuleRun> CudaRunner::BuildReference(const tir::Workload& w, const CudaDeviceInfo& device) {
  if (!reference_builder_) {
    MeasureConfig c = config_;
    if (c.cuda_arch.empty()) c.cuda_arch = device.Arch();  // the executor read it: no second query
    c.build_timeout_s = std::max(c.build_timeout_s, 60.0);
    reference_builder_ = std::make_unique<NvrtcBuilder>(c);
  }
  auto sch = tir::NaiveGpuSchedule(w);
  if (!sch) return MakeError("the reference schedule: " + sch.error().message);
  tir::LowerOptions options;
  options.name = "reference";
  auto func = tir::Lower(sch->state(), options);
  if (!func) return MakeError("lowering the reference: " + func.error().message);
  BuildResult b = reference_builder_->Build({BuildInput::FromFunc(*func)}).front();
  if (!b.ok()) {
    return MakeError(fmt::format("the reference kernel: {}: {}", ErrorKindName(b.error_kind), b.error_message));
  }
  if (const size_t n = w.NumTensors(); b.num_params != static_cast<int>(n)) {
    return MakeError(fmt::format("the reference kernel takes {} buffers, the workload has {}", b.num_params, n));
  }
  return CudaModuleRun::FromBuild(b);
}

Result<void> CudaRunner::PrepareWorkload(const tir::Workload& w) {
  const std::string key = WorkloadDataKey(w, config_.seed);
  if (key == workload_key_) {
    if (workload_error_) return MakeError(*workload_error_);
    return {};
  }
  auto prepare = [&]() -> Result<void> {
    // The executor first: without a GPU there is nothing to build a reference for.
    auto device = executor_.Start();
    if (!device) return device.error();
    CudaWorkloadSpec spec;
    spec.key = key;
    for (const auto& in : w.inputs) {
      spec.input_elements.push_back(in.NumElements());
      spec.input_types.push_back(in.dtype);
    }
    for (const auto& t : w.Outputs()) spec.output_elements.push_back(t.NumElements());
    spec.output_type = w.output.dtype;
    spec.extra_rtol = PrecisionTolerance(w.precision);
    spec.seed = config_.seed;
    if (w.dag) {
      auto reference = BuildReference(w, *device);
      if (!reference) return reference.error();
      spec.reference = std::move(*reference);
    } else {
      if (!w.reference) return MakeError("the workload has neither a compute definition nor a reference");
      spec.host_data = host_data_.Get(w, config_.seed);
    }
    executor_.SetWorkload(std::move(spec));
    return {};
  };
  Result<void> r = prepare();
  // A missing GPU is not a property of the workload: try again next time.
  const bool retry = !r && !executor_.running();
  workload_key_ = retry ? "" : key;
  workload_error_.reset();
  if (!r && !retry) workload_error_ = r.error().message;
  return r;
}

std::vector<MeasureResult> CudaRunner::Run(const tir::Workload& workload, const std::vector<BuildResult>& builds) {
  std::vector<MeasureResult> results;
  std::optional<Result<void>> prepared;
  const int64_t nparams = static_cast<int64_t>(workload.NumTensors());
  for (const auto& b : builds) {
    MeasureResult r;
    if (!b.ok()) {
      r = MeasureResult::Error(b.error_kind, b.error_message);
    } else if (b.kernels.empty()) {
      r = MeasureResult::Error(ErrorKind::kRunError, "not a CUDA build (no kernels to launch)");
    } else if (b.num_params != nparams) {
      r = MeasureResult::Error(ErrorKind::kRunError,
                               fmt::format("the kernel takes {} buffers, the workload has {}", b.num_params, nparams));
    } else {
      if (!prepared) prepared = PrepareWorkload(workload);
      if (!*prepared) {
        r = MeasureResult::Error(ErrorKind::kRunError, prepared->error().message);
      } else {
        const auto t0 = Clock::now();
        CudaRunOutcome o = executor_.Run(CudaModuleRun::FromBuild(b), screen_.StopAboveMs(workload_key_));
        r.error_kind = o.kind;
        r.error_message = std::move(o.message);
        r.max_rel_error = o.max_rel_error;
        r.latencies_ms = std::move(o.latencies_ms);
        r.timed_seconds = o.timed_seconds;
        r.correct = o.kind == ErrorKind::kNone;
        Summarize(r);
        if (r.correct) screen_.Record(workload_key_, r.median_ms);
        r.run_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      }
    }
    r.build_seconds = b.build_seconds;
    r.build_cpu_seconds = b.build_cpu_seconds;
    results.push_back(std::move(r));
  }
  return results;
}

std::unique_ptr<Runner> MakeCudaRunner(const MeasureConfig& config) { return std::make_unique<CudaRunner>(config); }

}  // namespace autotune::measure
