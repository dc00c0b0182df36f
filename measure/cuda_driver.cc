#include "measure/cuda_driver.h"

#include <dlfcn.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <mutex>

#include "measure/subprocess.h"

// With the toolkit's cuda.h at build time, check our copies of its constants (measure/CMakeLists.txt
// puts the toolkit's include directory on this file's include path when CMake found it).
#if defined(AUTOTUNE_CHECK_CUDA_H) && __has_include(<cuda.h>)
#include <cuda.h>
namespace {
namespace cu = autotune::measure::cu;
constexpr bool Same(int a, int b) { return a == b; }
static_assert(std::is_same_v<CUcontext, cu::Context> && std::is_same_v<CUmodule, cu::Module> &&
              std::is_same_v<CUfunction, cu::Function> && std::is_same_v<CUstream, cu::Stream> &&
              std::is_same_v<CUevent, cu::Event> && std::is_same_v<CUdevice, cu::Device> &&
              std::is_same_v<CUgraph, cu::Graph> && std::is_same_v<CUgraphExec, cu::GraphExec> &&
              sizeof(CUdeviceptr) == sizeof(cu::DevicePtr) && sizeof(CUresult) == sizeof(cu::Result));
static_assert(CUDA_SUCCESS == cu::kSuccess && CUDA_ERROR_NO_DEVICE == cu::kErrorNoDevice &&
              CUDA_ERROR_ILLEGAL_ADDRESS == cu::kErrorIllegalAddress);
static_assert(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL == cu::kStreamCaptureModeThreadLocal);
static_assert(Same(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cu::kMaxThreadsPerBlock) &&
              Same(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, cu::kMaxBlockDimX) &&
              Same(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, cu::kMaxBlockDimX + 2) &&
              Same(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, cu::kMaxGridDimX) &&
              Same(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, cu::kMaxGridDimX + 2) &&
              Same(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, cu::kMaxSharedMemoryPerBlock) &&
              Same(CU_DEVICE_ATTRIBUTE_WARP_SIZE, cu::kWarpSize) &&
              Same(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, cu::kMaxRegistersPerBlock) &&
              Same(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu::kMultiprocessorCount) &&
              Same(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, cu::kL2CacheSize) &&
              Same(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, cu::kMaxThreadsPerMultiprocessor) &&
              Same(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu::kComputeCapabilityMajor) &&
              Same(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu::kComputeCapabilityMinor) &&
              Same(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, cu::kMaxSharedMemoryPerMultiprocessor) &&
              Same(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, cu::kMaxRegistersPerMultiprocessor) &&
              Same(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, cu::kMaxSharedMemoryPerBlockOptin));
static_assert(Same(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cu::kFuncMaxThreadsPerBlock) &&
              Same(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, cu::kFuncSharedSizeBytes) &&
              Same(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, cu::kFuncLocalSizeBytes) &&
              Same(CU_FUNC_ATTRIBUTE_NUM_REGS, cu::kFuncNumRegs) &&
              Same(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, cu::kFuncMaxDynamicSharedSizeBytes));
}  // namespace
#endif

namespace autotune::measure {
namespace {

// Resolves `names` in order (a versioned symbol first, then older ones) into `fn`.
template <class Fn>
bool ResolveDriver(void* lib, Fn& fn, std::initializer_list<const char*> names, std::string& missing) {
  for (const char* name : names) {
    if (void* p = dlsym(lib, name)) {
      fn = reinterpret_cast<Fn>(p);
      return true;
    }
  }
  missing = *names.begin();
  return false;
}

Result<CudaDriver> LoadFrom(const std::string& library) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return MakeError(fmt::format("no CUDA driver ({}) on this machine", library));
  CudaDriver d{};
  std::string missing;
  const bool ok = ResolveDriver(lib, d.Init, {"cuInit"}, missing) &&
                  ResolveDriver(lib, d.DriverGetVersion, {"cuDriverGetVersion"}, missing) &&
                  ResolveDriver(lib, d.DeviceGetCount, {"cuDeviceGetCount"}, missing) &&
                  ResolveDriver(lib, d.DeviceGet, {"cuDeviceGet"}, missing) &&
                  ResolveDriver(lib, d.DeviceGetName, {"cuDeviceGetName"}, missing) &&
                  ResolveDriver(lib, d.DeviceGetAttribute, {"cuDeviceGetAttribute"}, missing) &&
                  ResolveDriver(lib, d.DeviceTotalMem, {"cuDeviceTotalMem_v2"}, missing) &&
                  ResolveDriver(lib, d.DevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing) &&
                  ResolveDriver(lib, d.DevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2"}, missing) &&
                  ResolveDriver(lib, d.CtxSetCurrent, {"cuCtxSetCurrent"}, missing) &&
                  ResolveDriver(lib, d.CtxGetCurrent, {"cuCtxGetCurrent"}, missing) &&
                  ResolveDriver(lib, d.CtxGetDevice, {"cuCtxGetDevice"}, missing) &&
                  ResolveDriver(lib, d.CtxSynchronize, {"cuCtxSynchronize"}, missing) &&
                  ResolveDriver(lib, d.ModuleLoadData, {"cuModuleLoadData"}, missing) &&
                  ResolveDriver(lib, d.ModuleUnload, {"cuModuleUnload"}, missing) &&
                  ResolveDriver(lib, d.ModuleGetFunction, {"cuModuleGetFunction"}, missing) &&
                  ResolveDriver(lib, d.FuncSetAttribute, {"cuFuncSetAttribute"}, missing) &&
                  ResolveDriver(lib, d.FuncGetAttribute, {"cuFuncGetAttribute"}, missing) &&
                  ResolveDriver(lib, d.LaunchKernel, {"cuLaunchKernel"}, missing) &&
                  ResolveDriver(lib, d.MemAlloc, {"cuMemAlloc_v2"}, missing) &&
                  ResolveDriver(lib, d.MemFree, {"cuMemFree_v2"}, missing) &&
                  ResolveDriver(lib, d.MemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing) &&
                  ResolveDriver(lib, d.MemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing) &&
                  ResolveDriver(lib, d.MemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"}, missing) &&
                  ResolveDriver(lib, d.MemAllocHost, {"cuMemAllocHost_v2"}, missing) &&
                  ResolveDriver(lib, d.MemFreeHost, {"cuMemFreeHost"}, missing) &&
                  ResolveDriver(lib, d.MemsetD8Async, {"cuMemsetD8Async"}, missing) &&
                  ResolveDriver(lib, d.MemsetD32Async, {"cuMemsetD32Async"}, missing) &&
                  ResolveDriver(lib, d.StreamCreate, {"cuStreamCreate"}, missing) &&
                  ResolveDriver(lib, d.StreamDestroy, {"cuStreamDestroy_v2"}, missing) &&
                  ResolveDriver(lib, d.StreamSynchronize, {"cuStreamSynchronize"}, missing) &&
                  ResolveDriver(lib, d.EventCreate, {"cuEventCreate"}, missing) &&
                  ResolveDriver(lib, d.EventDestroy, {"cuEventDestroy_v2"}, missing) &&
                  ResolveDriver(lib, d.EventRecord, {"cuEventRecord"}, missing) &&
                  ResolveDriver(lib, d.EventSynchronize, {"cuEventSynchronize"}, missing) &&
                  // cuda.h 12.8+ maps cuEventElapsedTime to _v2; older drivers only have the first.
                  ResolveDriver(lib, d.EventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing) &&
                  ResolveDriver(lib, d.GetErrorName, {"cuGetErrorName"}, missing) &&
                  ResolveDriver(lib, d.GetErrorString, {"cuGetErrorString"}, missing);
  if (!ok) {
    dlclose(lib);
    return MakeError(fmt::format("the CUDA driver ({}) lacks {}: driver too old?", library, missing));
  }
  // Optional: graphs time repeats without per-launch gaps; a driver without them measures as before.
  std::string optional;
  if (!(ResolveDriver(lib, d.StreamBeginCapture, {"cuStreamBeginCapture_v2"}, optional) &&
        ResolveDriver(lib, d.StreamEndCapture, {"cuStreamEndCapture"}, optional) &&
        ResolveDriver(lib, d.GraphInstantiateWithFlags, {"cuGraphInstantiateWithFlags"}, optional) &&
        ResolveDriver(lib, d.GraphLaunch, {"cuGraphLaunch"}, optional) &&
        ResolveDriver(lib, d.GraphExecDestroy, {"cuGraphExecDestroy"}, optional) &&
        ResolveDriver(lib, d.GraphDestroy, {"cuGraphDestroy"}, optional))) {
    d.StreamBeginCapture = nullptr;  // all or none: HasGraphs() says which
  }
  return d;  // the library stays loaded for the life of the process
}

}  // namespace

std::string CudaDriver::ErrorName(cu::Result error) const {
  const char* name = nullptr;
  if (GetErrorName && GetErrorName(error, &name) == cu::kSuccess && name) return name;
  return fmt::format("CUDA error {}", error);
}

std::string CudaDriver::ErrorText(cu::Result error) const {
  const char* text = nullptr;
  std::string s = ErrorName(error);
  if (GetErrorString && GetErrorString(error, &text) == cu::kSuccess && text) s += std::string(": ") + text;
  return s;
}

Result<const CudaDriver*> LoadCudaDriver() {
  static const Result<CudaDriver> loaded = LoadFrom(kCudaDriverLibrary);  // thread-safe, once
  if (!loaded) return loaded.error();
  return &loaded.value();
}

Result<CudaDriver> LoadCudaDriverFrom(const std::string& library) { return LoadFrom(library); }

std::string CudaDeviceInfo::Arch() const { return fmt::format("sm_{}{}", cc_major, cc_minor); }

std::string CudaDeviceInfo::Describe() const {
  return fmt::format("{} ({}, {} SMs, {} MiB L2, {} GiB, driver {}.{})", name, Arch(), sm_count, l2_bytes >> 20,
                     memory_bytes >> 30, driver_version / 1000, driver_version % 1000 / 10);
}

Result<CudaDeviceInfo> QueryCudaDevice(const CudaDriver& d, int ordinal) {
  auto check = [&](cu::Result r, const char* what) -> Result<void> {
    if (r == cu::kSuccess) return {};
    if (r == cu::kErrorNoDevice) return MakeError("no CUDA device");
    return MakeError(fmt::format("{}: {}", what, d.ErrorText(r)));
  };
  if (auto r = check(d.Init(0), "cuInit"); !r) return r.error();
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  int count = 0;
  if (auto r = check(d.DeviceGetCount(&count), "cuDeviceGetCount"); !r) return r.error();
  if (count == 0) return MakeError("no CUDA device");
  if (ordinal < 0 || ordinal >= count) {
    return MakeError(fmt::format("no CUDA device {} (this machine has {})", ordinal, count));
  }
  cu::Device dev = 0;
  if (auto r = check(d.DeviceGet(&dev, ordinal), "cuDeviceGet"); !r) return r.error();
  char name[256] = {};
  if (auto r = check(d.DeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName"); !r) return r.error();
  info.name = name;
  if (auto r = check(d.DriverGetVersion(&info.driver_version), "cuDriverGetVersion"); !r) return r.error();
  size_t mem = 0;
  if (auto r = check(d.DeviceTotalMem(&mem, dev), "cuDeviceTotalMem"); !r) return r.error();
  info.memory_bytes = static_cast<int64_t>(mem);
  struct {
    int attribute;
    int64_t* wide;
    int* narrow;
  } attributes[] = {
      {cu::kComputeCapabilityMajor, nullptr, &info.cc_major},
      {cu::kComputeCapabilityMinor, nullptr, &info.cc_minor},
      {cu::kMultiprocessorCount, nullptr, &info.sm_count},
      {cu::kL2CacheSize, &info.l2_bytes, nullptr},
      {cu::kMaxThreadsPerBlock, nullptr, &info.max_threads_per_block},
      {cu::kMaxBlockDimX, &info.max_block_dims[0], nullptr},
      {cu::kMaxBlockDimX + 1, &info.max_block_dims[1], nullptr},
      {cu::kMaxBlockDimX + 2, &info.max_block_dims[2], nullptr},
      {cu::kMaxGridDimX, &info.max_grid_dims[0], nullptr},
      {cu::kMaxGridDimX + 1, &info.max_grid_dims[1], nullptr},
      {cu::kMaxGridDimX + 2, &info.max_grid_dims[2], nullptr},
      {cu::kWarpSize, nullptr, &info.warp_size},
      {cu::kMaxSharedMemoryPerBlock, &info.max_shared_per_block, nullptr},
      {cu::kMaxSharedMemoryPerBlockOptin, &info.max_shared_per_block_optin, nullptr},
      {cu::kMaxSharedMemoryPerMultiprocessor, &info.max_shared_per_sm, nullptr},
      {cu::kMaxRegistersPerBlock, nullptr, &info.max_registers_per_block},
      {cu::kMaxRegistersPerMultiprocessor, nullptr, &info.max_registers_per_sm},
      {cu::kMaxThreadsPerMultiprocessor, nullptr, &info.max_threads_per_sm},
  };
  for (const auto& a : attributes) {
    int v = 0;
    if (auto r = check(d.DeviceGetAttribute(&v, a.attribute, dev), "cuDeviceGetAttribute"); !r) return r.error();
    if (a.wide) *a.wide = v;
    if (a.narrow) *a.narrow = v;
  }
  return info;
}

std::string CudaDeviceInfoToJson(const CudaDeviceInfo& i) {
  nlohmann::json j = {{"ordinal", i.ordinal},
                      {"name", i.name},
                      {"cc_major", i.cc_major},
                      {"cc_minor", i.cc_minor},
                      {"sm_count", i.sm_count},
                      {"l2_bytes", i.l2_bytes},
                      {"memory_bytes", i.memory_bytes},
                      {"driver_version", i.driver_version},
                      {"max_threads_per_block", i.max_threads_per_block},
                      {"max_block_dims", i.max_block_dims},
                      {"max_grid_dims", i.max_grid_dims},
                      {"warp_size", i.warp_size},
                      {"max_shared_per_block", i.max_shared_per_block},
                      {"max_shared_per_block_optin", i.max_shared_per_block_optin},
                      {"max_shared_per_sm", i.max_shared_per_sm},
                      {"max_registers_per_block", i.max_registers_per_block},
                      {"max_registers_per_sm", i.max_registers_per_sm},
                      {"max_threads_per_sm", i.max_threads_per_sm}};
  return j.dump();
}

Result<CudaDeviceInfo> CudaDeviceInfoFromJson(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("name")) return MakeError("malformed device info");
  CudaDeviceInfo i;
  try {
    i.ordinal = j.value("ordinal", 0);
    i.name = j.value("name", "");
    i.cc_major = j.value("cc_major", 0);
    i.cc_minor = j.value("cc_minor", 0);
    i.sm_count = j.value("sm_count", 0);
    i.l2_bytes = j.value("l2_bytes", int64_t{0});
    i.memory_bytes = j.value("memory_bytes", int64_t{0});
    i.driver_version = j.value("driver_version", 0);
    i.max_threads_per_block = j.value("max_threads_per_block", 0);
    if (j.contains("max_block_dims")) i.max_block_dims = j["max_block_dims"].get<std::array<int64_t, 3>>();
    if (j.contains("max_grid_dims")) i.max_grid_dims = j["max_grid_dims"].get<std::array<int64_t, 3>>();
    i.warp_size = j.value("warp_size", 0);
    i.max_shared_per_block = j.value("max_shared_per_block", int64_t{0});
    i.max_shared_per_block_optin = j.value("max_shared_per_block_optin", int64_t{0});
    i.max_shared_per_sm = j.value("max_shared_per_sm", int64_t{0});
    i.max_registers_per_block = j.value("max_registers_per_block", 0);
    i.max_registers_per_sm = j.value("max_registers_per_sm", 0);
    i.max_threads_per_sm = j.value("max_threads_per_sm", 0);
  } catch (const nlohmann::json::exception& e) {
    return MakeError(std::string("malformed device info: ") + e.what());
  }
  return i;
}

Result<CudaDeviceInfo> QueryCudaDeviceIsolated(int ordinal, double timeout_s) {
  static std::mutex mu;
  static std::map<int, CudaDeviceInfo> known;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = known.find(ordinal); it != known.end()) return it->second;
  }
  // The child answers "ok <json>" or "error <message>".
  ProcessResult p = RunForked(
      [ordinal](int fd) {
        // Not LoadCudaDriver(): its once-guard might have been held by another thread at the fork.
        std::string out;
        auto driver = LoadCudaDriverFrom(kCudaDriverLibrary);
        if (!driver) {
          out = "error " + driver.error().message;
        } else {
          auto info = QueryCudaDevice(*driver, ordinal);
          out = info ? "ok " + CudaDeviceInfoToJson(*info) : "error " + info.error().message;
        }
        WriteFully(fd, out.data(), out.size());
      },
      timeout_s, 1 << 20);
  if (!p.started) return MakeError("cannot query the CUDA device: " + p.output);
  if (p.timed_out) return MakeError(fmt::format("querying the CUDA device took over {:g} s", timeout_s));
  if (p.term_signal) return MakeError("querying the CUDA device crashed: " + DescribeSignal(p.term_signal));
  if (p.output.rfind("error ", 0) == 0) return MakeError(p.output.substr(6));
  if (p.output.rfind("ok ", 0) != 0) return MakeError("querying the CUDA device gave no answer");
  auto info = CudaDeviceInfoFromJson(p.output.substr(3));
  if (!info) return info.error();
  std::lock_guard<std::mutex> lock(mu);
  known[ordinal] = *info;
  return info;
}

}  // namespace autotune::measure
