#include "measure/c_builder.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "measure/build_cache.h"
#include "measure/host_info.h"
#include "measure/parallel_build.h"
#include "support/sha256.h"
#include "measure/subprocess.h"
#include "tir/codegen/codegen_c.h"
#include "tir/transform/serialize_threads.h"
#include "support/stopwatch.h"

namespace autotune::measure {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}


}  // namespace

CBuilder::CBuilder(MeasureConfig config) : config_(std::move(config)), slots_(config_.build_threads) {
  cache_dir_ = config_.cache_dir.empty() ? DefaultCacheDir("c") : config_.cache_dir;
  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  TrimCache(cache_dir_, CacheSizeLimitBytes());
  command_ = {config_.cc,        "-O3",          "-march=native",   "-fopenmp",           "-fPIC",
              "-shared",         "-std=c11",     "-fno-math-errno", "-ffp-contract=fast"};
  command_.insert(command_.end(), config_.extra_cflags.begin(), config_.extra_cflags.end());
  // What -march=native means on this host is part of the identity: the CPU model.
  identity_ = CCompilerVersion(config_.cc) + "\n" + HostCpuModel();
}

std::vector<BuildResult> CBuilder::Build(const std::vector<BuildInput>& inputs, const OnBuilt& on_built) {
  return BuildInParallel(
      inputs, slots_, [&](const BuildInput& input) { return BuildOne(input); }, tir::MarkedUnrolled, on_built);
}

BuildResult GenerateC(const BuildInput& input) {
  BuildResult r;
  if (!input.func.body) {
    r.source = input.source;
    r.entry = input.entry;
    r.num_params = input.num_params;
    return r;
  }
  tir::PrimFunc func = input.func;
  // Serialize here (CodegenC would too) to tell an invalid GPU program from a codegen failure.
  if (tir::NeedsThreadSerialization(func.body)) {
    auto serial = tir::SerializeThreads(func.body);
    if (!serial) return BuildResult::Failure(ErrorKind::kInvalidSchedule, serial.error().message);
    func.body = serial.value();
  }
  auto src = tir::CodegenC(func);
  if (!src) return BuildResult::Failure(ErrorKind::kBuildError, "codegen: " + src.error().message);
  r.source = std::move(src->code);
  r.entry = std::move(src->entry);
  r.num_params = static_cast<int>(func.params.size());
  return r;
}

BuildResult CBuilder::BuildOne(const BuildInput& input) const {
  const auto t0 = Clock::now();
  BuildResult r;
  auto fail = [&](ErrorKind kind, std::string msg) { return r.MarkFailed(kind, std::move(msg), SecondsSince(t0)); };

  r = GenerateC(input);
  if (!r.ok()) return fail(r.error_kind, r.error_message);

  std::string key_text = identity_ + "\n";
  for (const auto& a : command_) key_text += a + " ";
  key_text += "\n" + r.source;
  const std::string key = Sha256Hex(key_text);
  const fs::path so_path = fs::path(cache_dir_) / (key + ".so");
  std::error_code ec;
  if (fs::exists(so_path, ec)) {
    TouchCacheEntry(so_path.string());
    r.artifact = so_path.string();
    r.binary_bytes = static_cast<int64_t>(fs::file_size(so_path, ec));
    r.cached = true;
    r.build_seconds = SecondsSince(t0);
    return r;
  }

  // A private directory per compile inside the cache dir, so the final rename is atomic (same file
  // system) and concurrent builders never see half-written objects.
  std::string tmpl = (fs::path(cache_dir_) / "tmp-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return fail(ErrorKind::kBuildError, "cannot create a directory in " + cache_dir_);
  const fs::path dir = tmpl;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code e;
      fs::remove_all(dir, e);
    }
  } cleanup{dir};

  if (!WriteFile(dir / "kernel.c", r.source)) return fail(ErrorKind::kBuildError, "cannot write the source");
  std::vector<std::string> argv = command_;
  argv.insert(argv.end(), {"-o", "kernel.so", "kernel.c", "-lm"});
  ProcessResult p = RunProcess(argv, dir.string(), config_.build_timeout_s);
  if (p.timed_out) {
    return fail(ErrorKind::kBuildTimeout, fmt::format("compiler exceeded {:g} s", config_.build_timeout_s));
  }
  if (!p.ok()) {
    std::string why = !p.started         ? p.output
                      : p.term_signal    ? fmt::format("compiler killed by signal {}", p.term_signal)
                                         : fmt::format("compiler exited with code {}", p.exit_code);
    if (p.started && !p.output.empty()) why += ":\n" + TrimLog(p.output);
    return fail(ErrorKind::kBuildError, why);
  }
  WriteFile(dir / "kernel.c.keep", r.source);
  fs::rename(dir / "kernel.c.keep", fs::path(cache_dir_) / (key + ".c"), ec);  // for people reading the cache
  fs::rename(dir / "kernel.so", so_path, ec);
  if (ec) return fail(ErrorKind::kBuildError, "cannot move the object into the cache: " + ec.message());
  r.artifact = so_path.string();
  r.binary_bytes = static_cast<int64_t>(fs::file_size(so_path, ec));
  r.build_seconds = SecondsSince(t0);
  return r;
}

std::unique_ptr<Builder> MakeCBuilder(const MeasureConfig& config) { return std::make_unique<CBuilder>(config); }

}  // namespace autotune::measure
