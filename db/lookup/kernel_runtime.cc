#include "db/lookup/kernel_runtime.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
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
    return MakeError(fmt::format("the kernel takes {} tensors (inputs, then the outputs), not {}", num_params, num_args));
  }
  for (int i = 0; i < num_args; ++i) {
    if (!args || !args[i]) return MakeError(fmt::format("tensor {} is a null pointer", i));
    if (reinterpret_cast<uintptr_t>(args[i]) % alignment != 0) {
      return MakeError(fmt::format("tensor {} is not {}-byte aligned, as the kernel was measured with", i, alignment));
    }
  }
  return {};
}

// A pack function's tensor, owned by a module that packs its inputs on every launch.
struct AlignedBytes {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data;
  explicit AlignedBytes(int64_t bytes) : data(std::aligned_alloc(64, (static_cast<size_t>(bytes) + 63) / 64 * 64)) {}
};

class CpuModule final : public KernelModule {
 public:
  static Result<std::unique_ptr<KernelModule>> Load(const KernelSource& k) {
    if (k.num_params > static_cast<int>(measure::kMaxKernelParams)) {
      return MakeError(fmt::format("the kernel takes {} tensors; the runtime calls at most {}", k.num_params,
                                   measure::kMaxKernelParams));
    }
    const char* cc = std::getenv("CC");
    // For this host, whatever set the kernel was tuned for: the client runs it here.
    const measure::CCompiler compiler(cc && *cc ? cc : "cc", measure::NativeCpuIsa(), {}, measure::DefaultCacheDir("c"),
                                      kCompileTimeoutS);
    const measure::CCompiler::Output built = compiler.Compile(k.code);
    if (!built.ok) return MakeError("compiling the kernel: " + built.error);
    // Never unloaded (RTLD_NODELETE): the kernel brings OpenMP in, whose idle worker threads would
    // run on unmapped code if the kernel and its libgomp went away under them.
    void* lib = dlopen(built.artifact.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) return MakeError(fmt::format("loading {}: {}", built.artifact, dlerror()));
    std::vector<std::string> entries{k.launches.empty() ? "" : k.launches.front().entry};
    for (const auto& p : k.packs) entries.push_back(p.entry);
    std::vector<void*> fns;
    for (const auto& entry : entries) {
      fns.push_back(dlsym(lib, entry.c_str()));
      if (!fns.back()) {
        dlclose(lib);
        return MakeError(fmt::format("the compiled kernel has no entry point '{}'", entry));
      }
    }
    std::unique_ptr<CpuModule> m(new CpuModule(lib, fns, k, compiler.command()));
    for (size_t i = 0; i < k.packs.size(); ++i) {
      if (!m->buffers_[i].data) return MakeError(fmt::format("cannot allocate {} bytes for a packed input", k.packs[i].bytes));
    }
    return std::unique_ptr<KernelModule>(std::move(m));
  }
  ~CpuModule() override { dlclose(lib_); }

  Result<void> Launch(void* const* args, int num_args, void* stream) override {
    if (stream) return MakeError("a cpu kernel runs on no stream: pass none");
    AT_TRY_VOID(CheckArgs(args, num_args));
    std::vector<void*> packed(args, args + num_args);
    for (size_t i = 0; i < packs_.size(); ++i) {
      measure::CallPackFunction(pack_fns_[i], packed[packs_[i].param], buffers_[i].data.get());
      packed[packs_[i].param] = buffers_[i].data.get();
    }
    measure::CallCKernel(fn_, packed.data(), packed.size());
    return {};
  }
  Result<void> LaunchPacked(void* const* args, int num_args, void* stream) override {
    if (stream) return MakeError("a cpu kernel runs on no stream: pass none");
    AT_TRY_VOID(CheckArgs(args, num_args));
    measure::CallCKernel(fn_, args, static_cast<size_t>(num_args));
    return {};
  }
  Result<void> Pack(int pack, const void* tensor, void* packed) override {
    if (pack < 0 || pack >= static_cast<int>(packs_.size())) {
      return MakeError(fmt::format("the kernel has {} packed inputs; there is no pack {}", packs_.size(), pack));
    }
    void* pointers[2] = {const_cast<void*>(tensor), packed};
    AT_TRY_VOID(CheckKernelArgs(pointers, 2, 2, "c"));
    measure::CallPackFunction(pack_fns_[pack], tensor, packed);
    return {};
  }

 private:
  CpuModule(void* lib, const std::vector<void*>& fns, const KernelSource& k, const std::vector<std::string>& command)
      : KernelModule("c", k.num_params), lib_(lib), fn_(fns[0]), pack_fns_(fns.begin() + 1, fns.end()), packs_(k.packs) {
    for (const auto& part : command) build_options_ += (build_options_.empty() ? "" : " ") + part;
    for (const auto& p : packs_) buffers_.emplace_back(p.bytes);
  }
  void* lib_;
  void* fn_;
  std::vector<void*> pack_fns_;
  std::vector<KernelPack> packs_;
  std::vector<AlignedBytes> buffers_;  // Launch's packed tensors
};

}  // namespace

int64_t KernelPointerAlignment(const std::string& language) { return language == "cuda" ? 256 : 64; }

Result<void> CheckKernelArgs(void* const* args, int num_args, int num_params, const std::string& language) {
  return CheckPointers(args, num_args, num_params, KernelPointerAlignment(language));
}

Result<void> KernelModule::Pack(int, const void*, void*) { return MakeError("the kernel takes no packed inputs"); }

Result<std::unique_ptr<KernelModule>> KernelModule::Load(const KernelSource& kernel) {
  if (kernel.language == "c") return CpuModule::Load(kernel);
  if (kernel.language == "cuda") return LoadCudaKernelModule(kernel);
  return MakeError(fmt::format("no runtime for kernels in '{}'", kernel.language));
}

}  // namespace autotune::db
