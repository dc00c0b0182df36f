#include "measure/nvrtc_builder.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "measure/build_cache.h"
#include "measure/cubin_cache.h"
#include "measure/cuda_driver.h"
#include "measure/nvrtc_compiler.h"
#include "measure/parallel_build.h"
#include "measure/subprocess.h"

#include "tir/analysis/gpu_validity.h"
#include "tir/codegen/codegen_cuda.h"
#include "tir/codegen/cuda_kernels.h"
#include "support/stopwatch.h"

namespace autotune::measure {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr size_t kMaxErrorLog = 4000;  // NVRTC log kept in an error message
constexpr size_t kMaxLog = 16000;      // log kept in a successful result (ptxas info of many kernels)


// The limits the validity check judges a program against: the GPU's own when it was read, else
// those of the architecture (tir::GpuLimits' defaults are sm_90's; the opt-in shared memory per
// block differs between architectures, the other limits are the same from sm_70 to sm_120).
tir::GpuLimits LimitsFor(const std::string& arch, const std::optional<CudaDeviceInfo>& device) {
  tir::GpuLimits l;
  if (device) {
    auto set = [](int64_t& limit, int64_t value) {
      if (value > 0) limit = value;  // keep the default where the driver reported nothing
    };
    set(l.max_threads_per_block, device->max_threads_per_block);
    for (int i = 0; i < 3; ++i) {
      set(l.max_block_dims[i], device->max_block_dims[i]);
      set(l.max_grid_dims[i], device->max_grid_dims[i]);
    }
    set(l.max_static_shared_bytes, device->max_shared_per_block);
    set(l.max_shared_bytes_per_block, device->max_shared_per_block_optin);
    set(l.max_registers_per_block, device->max_registers_per_block);
    return l;
  }
  const int cc = std::atoi(arch.c_str() + 3);  // "sm_90a" -> 90
  if (cc == 75) l.max_shared_bytes_per_block = 64 * 1024;
  if (cc == 80 || cc == 87) l.max_shared_bytes_per_block = 163 * 1024;
  if (cc == 86 || cc == 89 || cc >= 120) l.max_shared_bytes_per_block = 99 * 1024;
  return l;
}

}  // namespace

NvrtcBuilder::NvrtcBuilder(MeasureConfig config) : config_(std::move(config)), slots_(config_.build_threads) {
  cache_dir_ = config_.cache_dir.empty() ? DefaultCacheDir("cuda") : config_.cache_dir;
  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  TrimCache(cache_dir_, CacheSizeLimitBytes());
}

const Result<NvrtcBuilder::Setup>& NvrtcBuilder::Prepare() {
  std::lock_guard<std::mutex> lock(mu_);
  if (setup_) return *setup_;
  setup_ = [&]() -> Result<Setup> {
    Setup s;
    auto nvrtc = LoadNvrtc();
    if (!nvrtc) return nvrtc.error();
    s.nvrtc = *nvrtc;
    std::string arch = config_.cuda_arch;
    if (arch.empty()) {
      auto device = QueryCudaDeviceIsolated(config_.cuda_device);
      if (!device) {
        return MakeError(fmt::format("cannot read the GPU architecture ({}): pass --arch (e.g. --arch sm_90)",
                                     device.error().message));
      }
      s.device = *device;
      arch = device->Arch();
    }
    auto normal = NormalizeCudaArch(arch);
    if (!normal) return normal.error();
    s.arch = *normal;
    s.options = NvrtcOptions(s.arch, config_);
    s.identity = CubinIdentity(*s.nvrtc, s.options);
    return s;
  }();
  return *setup_;
}

Result<std::string> NvrtcBuilder::Arch() {
  const auto& s = Prepare();
  if (!s) return s.error();
  return s->arch;
}

Result<std::vector<std::string>> NvrtcBuilder::Options() {
  const auto& s = Prepare();
  if (!s) return s.error();
  return s->options;
}

std::vector<BuildResult> NvrtcBuilder::Build(const std::vector<BuildInput>& inputs, const OnBuilt& on_built) {
  std::vector<BuildResult> results(inputs.size());
  if (inputs.empty()) return results;
  const Result<Setup>& setup = Prepare();
  if (!setup) {
    for (auto& r : results) {
      r.error_kind = ErrorKind::kBuildError;
      r.error_message = setup.error().message;
    }
    for (size_t i = 0; on_built && i < results.size(); ++i) on_built(i, results[i]);
    return results;
  }
  return BuildInParallel(
      inputs, slots_, [&](const BuildInput& input) { return BuildOne(input, *setup); },
      tir::CudaFullyUnrolls, on_built);
}

BuildResult GenerateCuda(const BuildInput& input, const tir::GpuLimits& limits) {
  tir::CudaModule module;
  if (input.func.body) {
    auto usage = tir::CheckGpuValidity(input.func, limits);
    if (!usage) return BuildResult::Failure(ErrorKind::kInvalidSchedule, usage.error().message);
    auto generated = tir::CodegenCuda(input.func);
    if (!generated) return BuildResult::Failure(ErrorKind::kBuildError, "codegen: " + generated.error().message);
    module = std::move(*generated);
  } else {
    if (input.kernels.empty()) {
      return BuildResult::Failure(ErrorKind::kBuildError,
                                  "a CUDA source needs its kernel launches (BuildInput::FromCudaModule)");
    }
    module.code = input.source;
    module.kernels = input.kernels;
    module.num_params = input.num_params;
    module.workspace_bytes = input.workspace_bytes;
  }
  if (module.kernels.empty()) return BuildResult::Failure(ErrorKind::kBuildError, "codegen made no kernel");
  BuildResult r;
  r.source = std::move(module.code);
  r.kernels = std::move(module.kernels);
  r.entry = r.kernels.front().entry;
  r.num_params = module.num_params;
  r.workspace_bytes = std::move(module.workspace_bytes);
  return r;
}

BuildResult NvrtcBuilder::BuildOne(const BuildInput& input, const Setup& setup) const {
  const auto t0 = Clock::now();
  BuildResult r;
  auto fail = [&](ErrorKind kind, std::string msg) { return r.MarkFailed(kind, std::move(msg), SecondsSince(t0)); };

  // ---- the module: generated from the lowered function, or given ----
  r = GenerateCuda(input, LimitsFor(setup.arch, setup.device));
  if (!r.ok()) return fail(r.error_kind, r.error_message);
  const tir::CudaModule module{r.source, r.kernels, r.num_params, r.workspace_bytes};

  auto finish = [&](std::string cubin_path, int64_t bytes, const std::string& log, bool cached) {
    const PtxasInfo ptxas = ParsePtxasInfo(log);
    r.artifact = std::move(cubin_path);
    r.binary_bytes = bytes;
    r.log = TrimLog(log, kMaxLog);
    r.registers = ptxas.registers;
    r.spill_bytes = ptxas.spill_store_bytes + ptxas.spill_load_bytes;
    r.cached = cached;
    r.build_seconds = SecondsSince(t0);
    return r;
  };

  // ---- the cache ----
  const std::string key = CubinKey(setup.identity, r.source);
  if (auto cached = FindCachedCubin(cache_dir_, key)) {
    return finish(cached->path, cached->bytes, cached->log, /*cached=*/true);
  }

  // ---- compile ----
  NvrtcOutput out = CompileToCubinIsolated(*setup.nvrtc, r.source, setup.options, config_.build_timeout_s);
  r.build_cpu_seconds = out.cpu_seconds;
  switch (out.status) {
    case NvrtcOutput::Status::kOk:
      break;
    case NvrtcOutput::Status::kTimeout:
      return fail(ErrorKind::kBuildTimeout, out.message);
    case NvrtcOutput::Status::kCompileError:
      r.log = TrimLog(out.log, kMaxLog);
      return fail(ErrorKind::kBuildError, "NVRTC compile error:\n" + TrimLog(out.log, kMaxErrorLog));
    case NvrtcOutput::Status::kFailed:
      r.log = TrimLog(out.log, kMaxLog);
      return fail(ErrorKind::kBuildError, TrimLog(out.message, kMaxErrorLog));
  }
  if (!StoreCubin(cache_dir_, key, r.source, out.log, out.cubin)) {
    return fail(ErrorKind::kBuildError, "cannot write the cubin into the cache " + cache_dir_);
  }
  return finish((fs::path(cache_dir_) / (key + ".cubin")).string(), static_cast<int64_t>(out.cubin.size()), out.log,
                /*cached=*/false);
}

std::unique_ptr<Builder> MakeNvrtcBuilder(const MeasureConfig& config) {
  return std::make_unique<NvrtcBuilder>(config);
}

}  // namespace autotune::measure
