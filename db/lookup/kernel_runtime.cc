#include "db/lookup/kernel_runtime.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

#include "db/lookup/cuda_kernel_module.h"
#include "measure/build_cache.h"
#include "measure/c_call.h"
#include "measure/c_compile.h"

namespace autotune::db {
namespace {

constexpr double kCompileTimeoutS = 600;

// Checks the pointers a launch gets: their count, none null, each aligned as promised.
Result<void> CheckPointers(void* const* args, int num_args, int num_params, int64_t alignment) {
  if (num_args != num_params) {
    return MakeError(fmt::format("the kernel takes {} tensors (inputs, then the output), not {}", num_params, num_args));
  }
  for (int i = 0; i < num_args; ++i) {
    if (!args || !args[i]) return MakeError(fmt::format("tensor {} is a null pointer", i));
    if (reinterpret_cast<uintptr_t>(args[i]) % alignment != 0) {
      return MakeError(fmt::format("tensor {} is not {}-byte aligned, as the kernel was measured with", i, alignment));
    }
  }
  return {};
}

class CpuModule final : public KernelModule {
 public:
  static Result<std::unique_ptr<KernelModule>> Load(const KernelSource& k) {
    if (k.num_params > static_cast<int>(measure::kMaxKernelParams)) {
      return MakeError(fmt::format("the kernel takes {} tensors; the runtime calls at most {}", k.num_params,
                                   measure::kMaxKernelParams));
    }
    const char* cc = std::getenv("CC");
    const measure::CCompiler compiler(cc && *cc ? cc : "cc", {}, measure::DefaultCacheDir("c"), kCompileTimeoutS);
    const measure::CCompiler::Output built = compiler.Compile(k.code);
    if (!built.ok) return MakeError("compiling the kernel: " + built.error);
    // Never unloaded (RTLD_NODELETE): the kernel brings OpenMP in, whose idle worker threads would
    // run on unmapped code if the kernel and its libgomp went away under them.
    void* lib = dlopen(built.artifact.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) return MakeError(fmt::format("loading {}: {}", built.artifact, dlerror()));
    const std::string entry = k.launches.empty() ? "" : k.launches.front().entry;
    void* fn = dlsym(lib, entry.c_str());
    if (!fn) {
      dlclose(lib);
      return MakeError(fmt::format("the compiled kernel has no entry point '{}'", entry));
    }
    return std::unique_ptr<KernelModule>(new CpuModule(lib, fn, k.num_params, compiler.command()));
  }
  ~CpuModule() override { dlclose(lib_); }

  Result<void> Launch(void* const* args, int num_args, void* stream) override {
    if (stream) return MakeError("a cpu kernel runs on no stream: pass none");
    AT_TRY_VOID(CheckArgs(args, num_args));
    measure::CallCKernel(fn_, args, static_cast<size_t>(num_args));
    return {};
  }

 private:
  CpuModule(void* lib, void* fn, int num_params, const std::vector<std::string>& command)
      : KernelModule("c", num_params), lib_(lib), fn_(fn) {
    for (const auto& part : command) build_options_ += (build_options_.empty() ? "" : " ") + part;
  }
  void* lib_;
  void* fn_;
};

}  // namespace

int64_t KernelPointerAlignment(const std::string& language) { return language == "cuda" ? 256 : 64; }

Result<void> CheckKernelArgs(void* const* args, int num_args, int num_params, const std::string& language) {
  return CheckPointers(args, num_args, num_params, KernelPointerAlignment(language));
}

Result<std::unique_ptr<KernelModule>> KernelModule::Load(const KernelSource& kernel) {
  if (kernel.language == "c") return CpuModule::Load(kernel);
  if (kernel.language == "cuda") return LoadCudaKernelModule(kernel);
  return MakeError(fmt::format("no runtime for kernels in '{}'", kernel.language));
}

}  // namespace autotune::db
