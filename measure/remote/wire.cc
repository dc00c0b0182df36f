#include "measure/remote/wire.h"

#include <fmt/format.h>

#include <cmath>

namespace autotune::measure::remote {

void ToWire(const BuildResult& generated, rpc::Candidate* out) {
  out->set_source(generated.source);
  out->set_entry(generated.entry);
  out->set_num_params(generated.num_params);
  for (const auto& k : generated.kernels) {
    rpc::KernelLaunch* l = out->add_kernels();
    l->set_entry(k.entry);
    for (int64_t g : k.grid) l->add_grid(g);
    for (int64_t b : k.block) l->add_block(b);
    l->set_dynamic_shared_bytes(k.dynamic_shared_bytes);
  }
  for (int64_t w : generated.workspace_bytes) out->add_workspace_bytes(w);
  for (const auto& p : generated.packs) {
    rpc::PackStep* step = out->add_packs();
    step->set_param(p.param);
    step->set_entry(p.entry);
    step->set_packed_elements(p.packed_elements);
  }
}

void ToWire(const MeasureConfig& c, rpc::Settings* out) {
  out->set_repeats(c.repeats);
  out->set_min_repeat_ms(c.min_repeat_ms);
  out->set_warmup(c.warmup);
  out->set_no_flush_cache(!c.flush_cache);
  out->set_build_timeout_s(c.build_timeout_s);
  out->set_run_timeout_s(c.run_timeout_s);
  out->set_rtol(c.rtol);
  out->set_seed(c.seed);
  out->set_screen_ratio(c.screen_ratio);
}

MeasureResult FromWire(const rpc::CandidateResult& r) {
  const auto kind = ParseErrorKind(r.error_kind());
  if (!kind) return MeasureResult::Error(ErrorKind::kRunError, "the worker sent an unknown error kind '" + r.error_kind() + "'");
  MeasureResult m;
  m.error_kind = *kind;
  m.error_message = r.error_message();
  m.correct = r.correct();
  m.max_rel_error = r.max_rel_error();
  m.build_seconds = r.build_seconds();
  m.build_cpu_seconds = r.build_cpu_seconds();
  m.run_seconds = r.run_seconds();
  m.timed_seconds = r.timed_seconds();
  if (m.ok()) {
    for (double ms : r.latencies_ms()) {
      if (!(ms > 0) || !std::isfinite(ms)) return MeasureResult::Error(ErrorKind::kRunError, "the worker sent a bad latency");
      m.latencies_ms.push_back(ms);
    }
    if (m.latencies_ms.empty() || !m.correct) {
      return MeasureResult::Error(ErrorKind::kRunError, "the worker sent a result without latencies or verdict");
    }
    Summarize(m);
  }
  return m;
}

Result<BuildInput> FromWire(const rpc::Candidate& c, bool cuda) {
  if (c.source().empty()) return MakeError("a candidate has no source");
  if (c.source().size() > kMaxSourceBytes) {
    return MakeError(fmt::format("a candidate's source has {} bytes, more than the {} allowed", c.source().size(),
                                 kMaxSourceBytes));
  }
  if (c.num_params() < 1 || c.num_params() > 64) {
    return MakeError(fmt::format("a candidate has {} parameters", c.num_params()));
  }
  if (!cuda) {
    if (c.entry().empty() || c.kernels_size() > 0) return MakeError("a cpu candidate names one entry and no kernels");
    BuildInput in = BuildInput::FromSource(c.source(), c.entry(), c.num_params());
    for (const auto& p : c.packs()) {
      if (p.entry().empty() || p.param() < 0 || p.param() >= c.num_params() - 1 || p.packed_elements() < 1 ||
          p.packed_elements() > kMaxPackedElements) {
        return MakeError("a pack step names no input, no function or a size out of range");
      }
      in.packs.push_back({p.param(), p.entry(), p.packed_elements()});
    }
    return in;
  }
  if (c.packs_size() > 0) return MakeError("a cuda candidate packs no inputs");
  if (c.kernels_size() < 1 || c.kernels_size() > kMaxKernels) {
    return MakeError(fmt::format("a cuda candidate has {} kernels (1 to {} allowed)", c.kernels_size(), kMaxKernels));
  }
  tir::CudaModule m;
  m.code = c.source();
  m.num_params = c.num_params();
  for (const auto& l : c.kernels()) {
    if (l.entry().empty() || l.grid_size() != 3 || l.block_size() != 3) {
      return MakeError("a kernel launch needs an entry and 3 grid and 3 block dimensions");
    }
    tir::CudaKernelLaunch k;
    k.entry = l.entry();
    for (int i = 0; i < 3; ++i) {
      if (l.grid(i) < 1 || l.grid(i) > (int64_t{1} << 31) || l.block(i) < 1 || l.block(i) > 1024) {
        return MakeError("a kernel launch has a dimension out of range");
      }
      k.grid[i] = l.grid(i);
      k.block[i] = l.block(i);
    }
    if (l.dynamic_shared_bytes() < 0 || l.dynamic_shared_bytes() > (int64_t{1} << 20)) {
      return MakeError("a kernel launch asks for a dynamic shared memory size out of range");
    }
    k.dynamic_shared_bytes = l.dynamic_shared_bytes();
    m.kernels.push_back(std::move(k));
  }
  for (int64_t w : c.workspace_bytes()) {
    if (w < 0 || w > (int64_t{1} << 34)) return MakeError("a workspace size is out of range");
    m.workspace_bytes.push_back(w);
  }
  return BuildInput::FromCudaModule(std::move(m));
}

Result<MeasureConfig> ApplySettings(const rpc::Settings& s, const MeasureConfig& worker) {
  MeasureConfig c = worker;
  auto positive = [](double x) { return std::isfinite(x) && x > 0; };
  if (s.repeats() < 0 || s.repeats() > kMaxRepeats) return MakeError(fmt::format("repeats must be 1 to {}", kMaxRepeats));
  if (s.repeats() > 0) c.repeats = s.repeats();
  if (s.warmup() < 0 || s.warmup() > 100) return MakeError("warmup must be 0 to 100");
  c.warmup = s.warmup() > 0 ? s.warmup() : c.warmup;
  if (s.min_repeat_ms() < 0 || s.min_repeat_ms() > 10000 || std::isnan(s.min_repeat_ms())) {
    return MakeError("min_repeat_ms must be 0 to 10000");
  }
  if (s.min_repeat_ms() > 0) c.min_repeat_ms = s.min_repeat_ms();
  if (s.no_flush_cache()) c.flush_cache = false;
  if (positive(s.build_timeout_s())) c.build_timeout_s = std::min(s.build_timeout_s(), worker.build_timeout_s);
  if (positive(s.run_timeout_s())) c.run_timeout_s = std::min(s.run_timeout_s(), worker.run_timeout_s);
  if (s.rtol() < 0 || s.rtol() > 1 || std::isnan(s.rtol())) return MakeError("rtol must be 0 to 1");
  if (s.rtol() > 0) c.rtol = s.rtol();
  if (s.seed() != 0) c.seed = s.seed();
  if (!(s.screen_ratio() >= 0 && s.screen_ratio() <= 1000)) return MakeError("screen_ratio must be 0 to 1000");
  c.screen_ratio = s.screen_ratio();  // the job's policy: 0 (off) is a choice too
  return c;
}

void ToWire(int index, const MeasureResult& r, const BuildResult* build, rpc::CandidateResult* out) {
  out->set_index(index);
  out->set_error_kind(ErrorKindName(r.error_kind));
  out->set_error_message(r.error_message);
  for (double ms : r.latencies_ms) out->add_latencies_ms(ms);
  out->set_correct(r.correct);
  out->set_max_rel_error(r.max_rel_error);
  out->set_build_seconds(r.build_seconds);
  out->set_build_cpu_seconds(r.build_cpu_seconds);
  out->set_run_seconds(r.run_seconds);
  out->set_timed_seconds(r.timed_seconds);
  if (build) {
    out->set_registers(build->registers);
    out->set_spill_bytes(build->spill_bytes);
    out->set_cached(build->cached);
  }
}

}  // namespace autotune::measure::remote
