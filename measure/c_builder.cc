#include "measure/c_builder.h"

#include <chrono>

#include "measure/build_cache.h"
#include "measure/parallel_build.h"
#include "tir/codegen/codegen_c.h"
#include "tir/transform/serialize_threads.h"
#include "support/stopwatch.h"

namespace autotune::measure {
namespace {
using Clock = std::chrono::steady_clock;

// The set named (the command line checked the name, and that this host runs it where it measures
// here), else the host's own.
CpuIsa IsaOf(const MeasureConfig& config) {
  if (config.cpu_isa.empty()) return NativeCpuIsa();
  auto isa = FindCpuIsa(config.cpu_isa);
  return isa ? *isa : NativeCpuIsa();
}
}  // namespace

CBuilder::CBuilder(MeasureConfig config)
    : config_(std::move(config)),
      slots_(config_.build_threads),
      compiler_(config_.cc, IsaOf(config_), config_.extra_cflags,
                config_.cache_dir.empty() ? DefaultCacheDir("c") : config_.cache_dir, config_.build_timeout_s) {}

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
    r.packs = input.packs;
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
  for (size_t i = 0; i < func.packs.size(); ++i) {
    r.packs.push_back({func.packs[i].param, src->pack_entries[i], tir::PackedElements(func.packs[i])});
  }
  return r;
}

BuildResult CBuilder::BuildOne(const BuildInput& input) const {
  const auto t0 = Clock::now();
  BuildResult r;
  auto fail = [&](ErrorKind kind, std::string msg) { return r.MarkFailed(kind, std::move(msg), SecondsSince(t0)); };

  r = GenerateC(input);
  if (!r.ok()) return fail(r.error_kind, r.error_message);

  const CCompiler::Output out = compiler_.Compile(r.source);
  if (!out.ok) return fail(out.timed_out ? ErrorKind::kBuildTimeout : ErrorKind::kBuildError, out.error);
  r.artifact = out.artifact;
  r.binary_bytes = out.bytes;
  r.cached = out.cached;
  r.build_seconds = SecondsSince(t0);
  return r;
}

std::unique_ptr<Builder> MakeCBuilder(const MeasureConfig& config) { return std::make_unique<CBuilder>(config); }

}  // namespace autotune::measure
