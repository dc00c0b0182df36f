// The CUDA Driver API, loaded at run time with dlopen("libcuda.so.1") and never linked, so every
// binary starts on a machine without a GPU and says clearly why a cuda target cannot run there
// (docs/DESIGN.md, convention 15).
//
// The table holds the few entry points measurement uses, resolved by their exported (versioned)
// symbol names: where cuda.h maps a name through a macro (cuMemAlloc -> cuMemAlloc_v2) we look up
// the versioned symbol. The types are declared here, so this header needs no CUDA toolkit; the
// struct tags are cuda.h's own, and cuda_driver.cc checks the constants against cuda.h when the
// toolkit is there at build time.
//
// Initializing CUDA makes a process unsafe to fork (driver threads and state), so code that forks
// (the tuner, the builders, the runners' parents) never calls Init: it queries devices through
// QueryCudaDeviceIsolated, and runs kernels in the CUDA runner's executor process.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "support/result.h"

// cuda.h's opaque handle types (same tags, so the handles are the same types as cuda.h's).
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;

namespace autotune::measure::cu {

using Result = int;  // CUresult: 0 is CUDA_SUCCESS
using Device = int;
using DevicePtr = unsigned long long;
using Context = CUctx_st*;
using Module = CUmod_st*;
using Function = CUfunc_st*;
using Stream = CUstream_st*;
using Event = CUevent_st*;
using Graph = CUgraph_st*;
using GraphExec = CUgraphExec_st*;

constexpr Result kSuccess = 0;
constexpr Result kErrorNoDevice = 100;         // CUDA_ERROR_NO_DEVICE
constexpr Result kErrorIllegalAddress = 700;   // CUDA_ERROR_ILLEGAL_ADDRESS

// CUdevice_attribute values.
enum DeviceAttribute : int {
  kMaxThreadsPerBlock = 1,
  kMaxBlockDimX = 2,  // Y = 3, Z = 4
  kMaxGridDimX = 5,   // Y = 6, Z = 7
  kMaxSharedMemoryPerBlock = 8,
  kWarpSize = 10,
  kMaxRegistersPerBlock = 12,
  kMultiprocessorCount = 16,
  kL2CacheSize = 38,
  kMaxThreadsPerMultiprocessor = 39,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kMaxSharedMemoryPerMultiprocessor = 81,
  kMaxRegistersPerMultiprocessor = 82,
  kMaxSharedMemoryPerBlockOptin = 97,
};

// CUfunction_attribute values.
enum FunctionAttribute : int {
  kFuncMaxThreadsPerBlock = 0,
  kFuncSharedSizeBytes = 1,
  kFuncLocalSizeBytes = 3,
  kFuncNumRegs = 4,
  kFuncMaxDynamicSharedSizeBytes = 8,
};

// CUevent_flags: cuEventSynchronize sleeps instead of spinning on a CPU.
constexpr unsigned kEventBlockingSync = 0x1;

// CUstreamCaptureMode: only this thread's calls are checked for being unsafe during a capture.
constexpr int kStreamCaptureModeThreadLocal = 1;

// Above this, dynamic shared memory needs kFuncMaxDynamicSharedSizeBytes set on the function.
constexpr int64_t kDefaultSharedMemoryLimit = 48 * 1024;

}  // namespace autotune::measure::cu

namespace autotune::measure {

// Function pointers of libcuda, named after their cuda.h names without the "cu" prefix (the
// prefixed names are macros in cuda.h). Comments give the exported symbol where it differs.
struct CudaDriver {
  // Initialization, version, devices.
  cu::Result (*Init)(unsigned flags);
  cu::Result (*DriverGetVersion)(int* version);
  cu::Result (*DeviceGetCount)(int* count);
  cu::Result (*DeviceGet)(cu::Device* device, int ordinal);
  cu::Result (*DeviceGetName)(char* name, int len, cu::Device device);
  cu::Result (*DeviceGetAttribute)(int* value, int attribute, cu::Device device);
  cu::Result (*DeviceTotalMem)(size_t* bytes, cu::Device device);  // cuDeviceTotalMem_v2
  // Context: the device's primary context (the one the runtime API uses too).
  cu::Result (*DevicePrimaryCtxRetain)(cu::Context* ctx, cu::Device device);
  cu::Result (*DevicePrimaryCtxRelease)(cu::Device device);  // cuDevicePrimaryCtxRelease_v2
  cu::Result (*CtxSetCurrent)(cu::Context ctx);
  cu::Result (*CtxGetCurrent)(cu::Context* ctx);
  cu::Result (*CtxGetDevice)(cu::Device* device);
  cu::Result (*CtxSynchronize)();
  // Modules and kernels.
  cu::Result (*ModuleLoadData)(cu::Module* module, const void* image);
  cu::Result (*ModuleUnload)(cu::Module module);
  cu::Result (*ModuleGetFunction)(cu::Function* fn, cu::Module module, const char* name);
  cu::Result (*FuncSetAttribute)(cu::Function fn, int attribute, int value);
  cu::Result (*FuncGetAttribute)(int* value, int attribute, cu::Function fn);
  cu::Result (*LaunchKernel)(cu::Function fn, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                             unsigned block_y, unsigned block_z, unsigned shared_bytes, cu::Stream stream,
                             void** params, void** extra);
  // Memory.
  cu::Result (*MemAlloc)(cu::DevicePtr* ptr, size_t bytes);                      // cuMemAlloc_v2
  cu::Result (*MemFree)(cu::DevicePtr ptr);                                      // cuMemFree_v2
  cu::Result (*MemcpyHtoD)(cu::DevicePtr dst, const void* src, size_t bytes);    // cuMemcpyHtoD_v2
  cu::Result (*MemcpyDtoH)(void* dst, cu::DevicePtr src, size_t bytes);          // cuMemcpyDtoH_v2
  cu::Result (*MemcpyDtoDAsync)(cu::DevicePtr dst, cu::DevicePtr src, size_t bytes, cu::Stream stream);  // _v2
  cu::Result (*MemAllocHost)(void** ptr, size_t bytes);  // cuMemAllocHost_v2: page-locked host memory
  cu::Result (*MemFreeHost)(void* ptr);
  cu::Result (*MemsetD8Async)(cu::DevicePtr dst, unsigned char value, size_t n, cu::Stream stream);
  cu::Result (*MemsetD32Async)(cu::DevicePtr dst, unsigned value, size_t n, cu::Stream stream);
  // Streams and events.
  cu::Result (*StreamCreate)(cu::Stream* stream, unsigned flags);
  cu::Result (*StreamDestroy)(cu::Stream stream);  // cuStreamDestroy_v2
  cu::Result (*StreamSynchronize)(cu::Stream stream);
  cu::Result (*EventCreate)(cu::Event* event, unsigned flags);
  cu::Result (*EventDestroy)(cu::Event event);  // cuEventDestroy_v2
  cu::Result (*EventRecord)(cu::Event event, cu::Stream stream);
  cu::Result (*EventSynchronize)(cu::Event event);
  cu::Result (*EventElapsedTime)(float* ms, cu::Event start, cu::Event end);  // _v2 where the driver has it
  // CUDA graphs (MeasureConfig::cuda_graph). Optional: null where the driver lacks them (before 11.4),
  // and only that timing mode then fails.
  cu::Result (*StreamBeginCapture)(cu::Stream stream, int mode);  // cuStreamBeginCapture_v2
  cu::Result (*StreamEndCapture)(cu::Stream stream, cu::Graph* graph);
  cu::Result (*GraphInstantiateWithFlags)(cu::GraphExec* exec, cu::Graph graph, unsigned long long flags);
  cu::Result (*GraphLaunch)(cu::GraphExec exec, cu::Stream stream);
  cu::Result (*GraphExecDestroy)(cu::GraphExec exec);
  cu::Result (*GraphDestroy)(cu::Graph graph);
  bool HasGraphs() const {
    return StreamBeginCapture && StreamEndCapture && GraphInstantiateWithFlags && GraphLaunch && GraphExecDestroy &&
           GraphDestroy;
  }
  // Errors.
  cu::Result (*GetErrorName)(cu::Result error, const char** name);
  cu::Result (*GetErrorString)(cu::Result error, const char** text);

  // "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
  std::string ErrorText(cu::Result error) const;
  // "CUDA_ERROR_ILLEGAL_ADDRESS" ("CUDA error 700" for a code the driver does not name).
  std::string ErrorName(cu::Result error) const;
};

inline constexpr const char* kCudaDriverLibrary = "libcuda.so.1";

// Loads libcuda.so.1 once per process (later calls return the same table or the same error):
// "no CUDA driver (libcuda.so.1) on this machine" when the library is missing, or names the missing
// symbol of a driver too old. Does not initialize CUDA.
Result<const CudaDriver*> LoadCudaDriver();
// The same from an explicit library, not cached: for tests, and for forked children (the once-guard
// of LoadCudaDriver may have been held by another thread of the parent at the fork).
Result<CudaDriver> LoadCudaDriverFrom(const std::string& library);

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;               // "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;  // compute capability
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int driver_version = 0;          // e.g. 13000 for CUDA 13.0
  int max_threads_per_block = 0;
  std::array<int64_t, 3> max_block_dims{0, 0, 0};
  std::array<int64_t, 3> max_grid_dims{0, 0, 0};
  int warp_size = 0;
  int64_t max_shared_per_block = 0;        // without opting in (48 KB)
  int64_t max_shared_per_block_optin = 0;  // with cuFuncSetAttribute (227 KB on Hopper)
  int64_t max_shared_per_sm = 0;
  int max_registers_per_block = 0;
  int max_registers_per_sm = 0;
  int max_threads_per_sm = 0;

  std::string Arch() const;      // "sm_90"
  std::string Describe() const;  // "NVIDIA H200 (sm_90, 132 SMs, 60 MiB L2, 141 GiB, driver 13.0)"
};

// Initializes CUDA in this process and reads device `ordinal`: "no CUDA device" when there is none.
Result<CudaDeviceInfo> QueryCudaDevice(const CudaDriver& driver, int ordinal);

// The same in a forked child process, so that this process stays uninitialized (safe to fork) and
// survives a broken driver. The result is cached per ordinal for the life of the process.
Result<CudaDeviceInfo> QueryCudaDeviceIsolated(int ordinal, double timeout_s = 120);

// Device info as JSON text and back (how the executor and the query child report it).
std::string CudaDeviceInfoToJson(const CudaDeviceInfo& info);
Result<CudaDeviceInfo> CudaDeviceInfoFromJson(const std::string& text);

}  // namespace autotune::measure
