#include "db/lookup/cuda_kernel_module.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "measure/build_cache.h"
#include "measure/cubin_cache.h"
#include "measure/cuda_driver.h"
#include "measure/measure_config.h"
#include "measure/nvrtc_compiler.h"

namespace autotune::db {
namespace {

namespace fs = std::filesystem;
using measure::CudaDriver;
namespace cu = measure::cu;

// The context current on this thread, else device 0's primary context made current; and its device.
Result<std::pair<cu::Context, cu::Device>> CurrentContext(const CudaDriver& d) {
  auto check = [&](cu::Result r, const char* what) -> Result<void> {
    if (r != cu::kSuccess) return MakeError(fmt::format("{}: {}", what, d.ErrorText(r)));
    return {};
  };
  AT_TRY_VOID(check(d.Init(0), "cuInit"));
  cu::Context ctx = nullptr;
  cu::Device dev = 0;
  AT_TRY_VOID(check(d.CtxGetCurrent(&ctx), "cuCtxGetCurrent"));
  if (!ctx) {
    AT_TRY_VOID(check(d.DeviceGet(&dev, 0), "cuDeviceGet"));
    AT_TRY_VOID(check(d.DevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain"));
    AT_TRY_VOID(check(d.CtxSetCurrent(ctx), "cuCtxSetCurrent"));
  }
  AT_TRY_VOID(check(d.CtxGetDevice(&dev), "cuCtxGetDevice"));
  return std::make_pair(ctx, dev);
}

// The cubin of `source` for `options`: from the cache the tuner's builder shares, or compiled by
// NVRTC here and put there (a cache that cannot be written is no error).
Result<std::string> Cubin(const measure::Nvrtc& nvrtc, const std::string& source, const std::vector<std::string>& options) {
  const std::string dir = measure::DefaultCacheDir("cuda");
  const std::string key = measure::CubinKey(measure::CubinIdentity(nvrtc, options), source);
  if (auto cached = measure::FindCachedCubin(dir, key)) {
    if (std::ifstream in{cached->path, std::ios::binary}) {
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    }
  }
  const measure::NvrtcOutput out = measure::CompileToCubin(nvrtc, source, options);
  if (out.status != measure::NvrtcOutput::Status::kOk) {
    return MakeError("compiling the kernel with NVRTC: " + (out.message.empty() ? out.log : out.message));
  }
  measure::TrimCache(dir, measure::CacheSizeLimitBytes());
  measure::StoreCubin(dir, key, source, out.log, out.cubin);
  return out.cubin;
}

class CudaRuntimeModule final : public KernelModule {
 public:
  CudaRuntimeModule(const CudaDriver& d, cu::Context ctx, int num_params)
      : KernelModule("cuda", num_params), d_(d), ctx_(ctx) {}
  ~CudaRuntimeModule() override {
    d_.CtxSetCurrent(ctx_);
    for (cu::DevicePtr w : workspaces_) d_.MemFree(w);
    if (module_) d_.ModuleUnload(module_);
  }

  Result<void> Init(const KernelSource& k, const std::string& cubin, const std::vector<std::string>& options) {
    for (const auto& o : options) build_options_ += (build_options_.empty() ? "" : " ") + o;
    AT_TRY_VOID(Check(d_.ModuleLoadData(&module_, cubin.data()), "cuModuleLoadData"));
    for (const auto& l : k.launches) {
      cu::Function fn = nullptr;
      AT_TRY_VOID(Check(d_.ModuleGetFunction(&fn, module_, l.entry.c_str()), "cuModuleGetFunction"));
      if (l.dynamic_shared_bytes > cu::kDefaultSharedMemoryLimit) {
        AT_TRY_VOID(Check(d_.FuncSetAttribute(fn, cu::kFuncMaxDynamicSharedSizeBytes, static_cast<int>(l.dynamic_shared_bytes)),
                          "cuFuncSetAttribute"));
      }
      functions_.push_back(fn);
    }
    for (int64_t bytes : k.workspace_bytes) {
      cu::DevicePtr p = 0;
      AT_TRY_VOID(Check(d_.MemAlloc(&p, static_cast<size_t>(std::max<int64_t>(bytes, 1))), "cuMemAlloc"));
      workspaces_.push_back(p);
    }
    launches_ = k.launches;
    return {};
  }

  Result<void> Launch(void* const* args, int num_args, void* stream) override {
    AT_TRY_VOID(CheckArgs(args, num_args));
    std::vector<cu::DevicePtr> ptrs;
    for (int i = 0; i < num_args; ++i) ptrs.push_back(reinterpret_cast<cu::DevicePtr>(args[i]));
    ptrs.insert(ptrs.end(), workspaces_.begin(), workspaces_.end());
    std::vector<void*> params;
    for (auto& p : ptrs) params.push_back(&p);
    AT_TRY_VOID(Check(d_.CtxSetCurrent(ctx_), "cuCtxSetCurrent"));
    for (size_t i = 0; i < launches_.size(); ++i) {
      const auto& l = launches_[i];
      AT_TRY_VOID(Check(d_.LaunchKernel(functions_[i], l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                                        static_cast<unsigned>(l.dynamic_shared_bytes), static_cast<cu::Stream>(stream),
                                        params.data(), nullptr),
                        "cuLaunchKernel"));
    }
    return {};
  }

 private:
  Result<void> Check(cu::Result r, const char* what) const {
    if (r != cu::kSuccess) return MakeError(fmt::format("{}: {}", what, d_.ErrorText(r)));
    return {};
  }

  const CudaDriver& d_;
  cu::Context ctx_;
  cu::Module module_ = nullptr;
  std::vector<cu::Function> functions_;
  std::vector<cu::DevicePtr> workspaces_;
  std::vector<tir::CudaKernelLaunch> launches_;
};

}  // namespace

Result<std::unique_ptr<KernelModule>> LoadCudaKernelModule(const KernelSource& k) {
  AT_TRY(driver, measure::LoadCudaDriver());
  AT_TRY(nvrtc, measure::LoadNvrtc());
  AT_TRY(current, CurrentContext(*driver));
  int major = 0, minor = 0;
  driver->DeviceGetAttribute(&major, cu::kComputeCapabilityMajor, current.second);
  driver->DeviceGetAttribute(&minor, cu::kComputeCapabilityMinor, current.second);
  const std::vector<std::string> options = measure::NvrtcOptions(fmt::format("sm_{}{}", major, minor), measure::MeasureConfig{});
  AT_TRY(cubin, Cubin(*nvrtc, k.code, options));
  auto m = std::make_unique<CudaRuntimeModule>(*driver, current.first, k.num_params);
  AT_TRY_VOID(m->Init(k, cubin, options));
  return std::unique_ptr<KernelModule>(std::move(m));
}

}  // namespace autotune::db
