#include "measure/nvrtc_compiler.h"

#include <dlfcn.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "measure/nvrtc_helper_pool.h"
#include "measure/subprocess.h"

// With the toolkit's nvrtc.h at build time, check our copies of its constants.
#if defined(AUTOTUNE_CHECK_CUDA_H) && __has_include(<nvrtc.h>)
#include <nvrtc.h>
static_assert(NVRTC_SUCCESS == autotune::measure::Nvrtc::kSuccess &&
              NVRTC_ERROR_COMPILATION == autotune::measure::Nvrtc::kErrorCompilation);
static_assert(std::is_same_v<nvrtcProgram, autotune::measure::Nvrtc::Program>);
#endif

namespace autotune::measure {

namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> Candidates() {
  std::vector<std::string> c = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};
#ifdef AUTOTUNE_NVRTC_LIBRARY
  c.push_back(AUTOTUNE_NVRTC_LIBRARY);
#endif
  c.push_back("/usr/local/cuda/lib64/libnvrtc.so");
  return c;
}

template <class Fn>
bool ResolveNvrtc(void* lib, Fn& fn, const char* name, const char*& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn) missing = name;
  return fn != nullptr;
}

Result<Nvrtc> Load() {
  std::string tried;
  for (const std::string& name : Candidates()) {
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      tried += (tried.empty() ? "" : ", ") + name;
      continue;
    }
    Nvrtc n{};
    const char* missing = nullptr;
    const bool ok =
        ResolveNvrtc(lib, n.Version, "nvrtcVersion", missing) && ResolveNvrtc(lib, n.GetErrorString, "nvrtcGetErrorString", missing) &&
        ResolveNvrtc(lib, n.CreateProgram, "nvrtcCreateProgram", missing) &&
        ResolveNvrtc(lib, n.DestroyProgram, "nvrtcDestroyProgram", missing) &&
        ResolveNvrtc(lib, n.CompileProgram, "nvrtcCompileProgram", missing) &&
        ResolveNvrtc(lib, n.GetProgramLogSize, "nvrtcGetProgramLogSize", missing) &&
        ResolveNvrtc(lib, n.GetProgramLog, "nvrtcGetProgramLog", missing) &&
        ResolveNvrtc(lib, n.GetCUBINSize, "nvrtcGetCUBINSize", missing) && ResolveNvrtc(lib, n.GetCUBIN, "nvrtcGetCUBIN", missing);
    if (!ok) {
      dlclose(lib);
      return MakeError(fmt::format("NVRTC ({}) lacks {}: NVRTC 11.2 or newer is needed", name, missing));
    }
    if (n.Version(&n.major, &n.minor) != Nvrtc::kSuccess) {
      dlclose(lib);
      return MakeError(fmt::format("NVRTC ({}) does not report its version", name));
    }
    Dl_info where{};
    n.library = dladdr(reinterpret_cast<void*>(n.Version), &where) && where.dli_fname ? where.dli_fname : name;
    return n;  // stays loaded for the life of the process
  }
  return MakeError(fmt::format(
      "NVRTC not found (tried {}): install the CUDA toolkit, or put its lib64 on LD_LIBRARY_PATH", tried));
}

// ---- the child's answer: status byte, log size, log, cubin -------------------------------------
enum : char { kChildOk = 'o', kChildCompileError = 'e', kChildFailed = 'f' };

}  // namespace

std::string EncodeNvrtcOutput(const NvrtcOutput& out) {
  std::string s(1, out.status == NvrtcOutput::Status::kOk             ? kChildOk
                   : out.status == NvrtcOutput::Status::kCompileError ? kChildCompileError
                                                                      : kChildFailed);
  const std::string& log = out.status == NvrtcOutput::Status::kFailed ? out.message : out.log;
  const uint64_t n = log.size();
  s.append(reinterpret_cast<const char*>(&n), sizeof n);
  s += log;
  s += out.cubin;
  return s;
}

namespace {

// Reads the number in front of `phrase` in `line` ("8 bytes spill stores" -> 8); -1 when absent.
int64_t NumberBefore(const std::string& line, const char* phrase) {
  const size_t at = line.find(phrase);
  if (at == std::string::npos) return -1;
  size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  if (begin == end) return -1;
  return std::strtoll(line.c_str() + begin, nullptr, 10);
}

}  // namespace

std::string Nvrtc::VersionText() const { return fmt::format("{}.{}", major, minor); }

Result<const Nvrtc*> LoadNvrtc() {
  // Where a CUDA driver is installed, NVRTC keeps compiled code in the driver's cache
  // (~/.nv/ComputeCache) and a repeated compile returns without ptxas's report, so registers and
  // spills would read 0 (seen on the H200 machine). autotune caches cubins itself, with their logs.
  // Set before NVRTC loads; a user's explicit setting wins.
  static const bool cache_off = setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/0) == 0;
  (void)cache_off;
  static const Result<Nvrtc> loaded = Load();  // thread-safe, once
  if (!loaded) return loaded.error();
  return &loaded.value();
}

Result<std::string> NormalizeCudaArch(const std::string& arch) {
  std::string s = arch.rfind("sm_", 0) == 0 ? arch.substr(3) : arch;
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  const std::string suffix = s.substr(digits);
  if (digits < 2 || digits > 3 || !(suffix.empty() || suffix == "a" || suffix == "f")) {
    return MakeError(fmt::format("bad CUDA architecture '{}': expected e.g. sm_90 or 90", arch));
  }
  return "sm_" + s;
}

std::vector<std::string> NvrtcOptions(const std::string& arch, const MeasureConfig& config) {
  std::vector<std::string> o = {"--gpu-architecture=" + arch, "-default-device", "--std=c++17",
                                "--ptxas-options=-v"};
  if (config.cuda_lineinfo) o.push_back("-lineinfo");
  o.insert(o.end(), config.nvrtc_options.begin(), config.nvrtc_options.end());
  return o;
}

NvrtcOutput CompileToCubin(const Nvrtc& nv, const std::string& source, const std::vector<std::string>& options) {
  const auto t0 = Clock::now();
  NvrtcOutput out;
  auto failed = [&](const char* what, Nvrtc::Status s) {
    out.status = NvrtcOutput::Status::kFailed;
    const char* text = nv.GetErrorString(s);
    out.message = fmt::format("{}: {}", what, text ? text : fmt::format("NVRTC error {}", s));
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return out;
  };
  Nvrtc::Program prog = nullptr;
  Nvrtc::Status s = nv.CreateProgram(&prog, source.c_str(), "kernel.cu", 0, nullptr, nullptr);
  if (s != Nvrtc::kSuccess) return failed("nvrtcCreateProgram", s);
  struct Destroy {
    const Nvrtc& nv;
    Nvrtc::Program& prog;
    ~Destroy() { nv.DestroyProgram(&prog); }
  } destroy{nv, prog};

  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const Nvrtc::Status compiled = nv.CompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  if ((s = nv.GetProgramLogSize(prog, &log_size)) != Nvrtc::kSuccess) return failed("nvrtcGetProgramLogSize", s);
  std::string log(log_size, '\0');
  if (log_size > 0 && (s = nv.GetProgramLog(prog, log.data())) != Nvrtc::kSuccess) {
    return failed("nvrtcGetProgramLog", s);
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  out.log = std::move(log);
  if (compiled == Nvrtc::kErrorCompilation) {
    out.status = NvrtcOutput::Status::kCompileError;
  } else if (compiled != Nvrtc::kSuccess) {
    // e.g. NVRTC_ERROR_INVALID_OPTION for an architecture this NVRTC does not know.
    NvrtcOutput f = failed("nvrtcCompileProgram", compiled);
    if (!out.log.empty()) f.message += "\n" + out.log;
    f.log = out.log;
    return f;
  } else {
    size_t size = 0;
    if ((s = nv.GetCUBINSize(prog, &size)) != Nvrtc::kSuccess) return failed("nvrtcGetCUBINSize", s);
    out.cubin.resize(size);
    if ((s = nv.GetCUBIN(prog, out.cubin.data())) != Nvrtc::kSuccess) return failed("nvrtcGetCUBIN", s);
    if (size == 0) return failed("nvrtcGetCUBIN", Nvrtc::kSuccess);
    out.status = NvrtcOutput::Status::kOk;
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

namespace {

// What the compiling process ended with (p) and sent (`bytes`: EncodeNvrtcOutput's), as a result.
NvrtcOutput DecodeChildResult(const ProcessResult& p, const std::string& bytes, double cpu_limit_s, double wall_limit_s) {
  NvrtcOutput out;
  out.seconds = p.seconds;
  out.cpu_seconds = p.cpu_seconds;
  out.status = NvrtcOutput::Status::kFailed;
  if (!p.started) {
    out.message = "cannot start the NVRTC process: " + p.output;
    return out;
  }
  if (p.timed_out) {
    out.status = NvrtcOutput::Status::kTimeout;
    out.message = p.seconds >= wall_limit_s
                      ? fmt::format("NVRTC exceeded {:g} s of wall time (the machine is overloaded?)", wall_limit_s)
                      : fmt::format("NVRTC exceeded {:g} s of CPU time", cpu_limit_s);
    return out;
  }
  if (p.term_signal) {
    out.message = "NVRTC crashed: " + DescribeSignal(p.term_signal);
    return out;
  }
  uint64_t n = 0;
  if (bytes.size() < 1 + sizeof n) {
    std::string said = TrimLog(p.output, 1000);
    while (!said.empty() && said.back() == '\n') said.pop_back();
    out.message = fmt::format("the NVRTC process exited with code {} without a result{}", p.exit_code,
                              said.empty() ? "" : ": " + said);
    return out;
  }
  std::memcpy(&n, bytes.data() + 1, sizeof n);
  if (n > bytes.size() - 1 - sizeof n) {
    out.message = "the NVRTC process sent a malformed result";
    return out;
  }
  std::string text = bytes.substr(1 + sizeof n, n);
  switch (bytes[0]) {
    case kChildOk:
      out.status = NvrtcOutput::Status::kOk;
      out.log = std::move(text);
      out.cubin = bytes.substr(1 + sizeof n + n);
      break;
    case kChildCompileError:
      out.status = NvrtcOutput::Status::kCompileError;
      out.log = std::move(text);
      break;
    default:
      out.message = std::move(text);
      break;
  }
  return out;
}

// The helper next to this executable, or the one AUTOTUNE_NVRTC_HELPER names ("" there: none).
std::string FindNvrtcHelper() {
  if (const char* env = std::getenv("AUTOTUNE_NVRTC_HELPER")) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path helper = self.parent_path() / kNvrtcHelperName;
  return access(helper.c_str(), X_OK) == 0 ? helper.string() : "";
}

}  // namespace

const std::string& NvrtcHelperPath() {
  static const std::string path = FindNvrtcHelper();
  return path;
}

NvrtcOutput CompileToCubinInHelper(const std::string& helper, const std::string& source,
                                   const std::vector<std::string>& options, double cpu_limit_s) {
  const double wall_limit_s = kWallLimitFactor * cpu_limit_s;
  HelperCompile c = HelperPoolFor(helper).Compile(HelperRequest{cpu_limit_s, options, source}, wall_limit_s);
  NoteCpuLimit(c.process, cpu_limit_s);  // the helper set it on itself
  return DecodeChildResult(c.process, c.answer, cpu_limit_s, wall_limit_s);
}

NvrtcOutput CompileToCubinIsolated(const Nvrtc& nv, const std::string& source, const std::vector<std::string>& options,
                                   double cpu_limit_s) {
  if (const std::string& helper = NvrtcHelperPath(); !helper.empty()) {
    return CompileToCubinInHelper(helper, source, options, cpu_limit_s);
  }
  ForkLimits limits;
  limits.cpu_s = cpu_limit_s;
  limits.wall_s = kWallLimitFactor * cpu_limit_s;
  limits.nice = kCompileNice;
  ProcessResult p = RunForked(
      [&](int fd) {
        const std::string bytes = EncodeNvrtcOutput(CompileToCubin(nv, source, options));
        WriteFully(fd, bytes.data(), bytes.size());
      },
      limits);
  return DecodeChildResult(p, p.output, cpu_limit_s, limits.wall_s);
}

PtxasInfo ParsePtxasInfo(const std::string& log) {
  PtxasInfo info;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(pos, end - pos);
    pos = end + 1;
    if (line.find("ptxas") == std::string::npos && line.find("bytes stack frame") == std::string::npos) continue;
    if (line.find("Compiling entry function") != std::string::npos) ++info.kernels;
    if (line.find("Used ") != std::string::npos) {
      const int64_t regs = NumberBefore(line, " registers");
      if (regs > info.registers) info.registers = static_cast<int>(regs);
    }
    if (const int64_t v = NumberBefore(line, " bytes spill stores"); v > 0) info.spill_store_bytes += v;
    if (const int64_t v = NumberBefore(line, " bytes spill loads"); v > 0) info.spill_load_bytes += v;
    if (const int64_t v = NumberBefore(line, " bytes stack frame"); v > info.stack_frame_bytes) {
      info.stack_frame_bytes = v;
    }
  }
  return info;
}

}  // namespace autotune::measure
