#include "measure/c_compile.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "measure/build_cache.h"
#include "measure/host_info.h"
#include "measure/subprocess.h"
#include "support/sha256.h"

namespace autotune::measure {
namespace {

namespace fs = std::filesystem;

bool WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

}  // namespace

CCompiler::CCompiler(const std::string& cc, const CpuIsa& isa, const std::vector<std::string>& extra_flags,
                     std::string cache_dir, double timeout_s)
    : cache_dir_(std::move(cache_dir)), timeout_s_(timeout_s) {
  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  TrimCache(cache_dir_, CacheSizeLimitBytes());
  command_ = {cc, "-O3", "-fopenmp", "-fPIC", "-shared", "-std=c11", "-fno-math-errno", "-ffp-contract=fast"};
  command_.insert(command_.end(), isa.flags.begin(), isa.flags.end());
  command_.insert(command_.end(), extra_flags.begin(), extra_flags.end());
  // What -march=native and -mtune=native mean on this host is part of the identity: the CPU model.
  identity_ = CCompilerVersion(cc) + "\n" + HostCpuModel();
}

CCompiler::Output CCompiler::Compile(const std::string& source) const {
  Output out;
  std::string key_text = identity_ + "\n";
  for (const auto& a : command_) key_text += a + " ";
  key_text += "\n" + source;
  const std::string key = Sha256Hex(key_text);
  const fs::path so_path = fs::path(cache_dir_) / (key + ".so");
  std::error_code ec;
  if (fs::exists(so_path, ec)) {
    TouchCacheEntry(so_path.string());
    out.ok = out.cached = true;
    out.artifact = so_path.string();
    out.bytes = static_cast<int64_t>(fs::file_size(so_path, ec));
    return out;
  }
  // A private directory per compile inside the cache dir, so the final rename is atomic (same file
  // system) and concurrent builders never see half-written objects.
  std::string tmpl = (fs::path(cache_dir_) / "tmp-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return out.error = "cannot create a directory in " + cache_dir_, out;
  const fs::path dir = tmpl;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code e;
      fs::remove_all(dir, e);
    }
  } cleanup{dir};
  if (!WriteFile(dir / "kernel.c", source)) return out.error = "cannot write the source", out;
  std::vector<std::string> argv = command_;
  argv.insert(argv.end(), {"-o", "kernel.so", "kernel.c", "-lm"});
  ProcessResult p = RunProcess(argv, dir.string(), timeout_s_);
  if (p.timed_out) {
    out.timed_out = true;
    out.error = fmt::format("compiler exceeded {:g} s", timeout_s_);
    return out;
  }
  if (!p.ok()) {
    out.error = !p.started        ? p.output
                : p.term_signal   ? fmt::format("compiler killed by signal {}", p.term_signal)
                                  : fmt::format("compiler exited with code {}", p.exit_code);
    if (p.started && !p.output.empty()) out.error += ":\n" + TrimLog(p.output);
    return out;
  }
  WriteFile(dir / "kernel.c.keep", source);
  fs::rename(dir / "kernel.c.keep", fs::path(cache_dir_) / (key + ".c"), ec);  // for people reading the cache
  fs::rename(dir / "kernel.so", so_path, ec);
  if (ec) return out.error = "cannot move the object into the cache: " + ec.message(), out;
  out.ok = true;
  out.artifact = so_path.string();
  out.bytes = static_cast<int64_t>(fs::file_size(so_path, ec));
  return out;
}

}  // namespace autotune::measure
