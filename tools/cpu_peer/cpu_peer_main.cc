// autotune-cpu-peer: times a CPU library's operator on the inputs `autotune measure --save-io DIR`
// saved, with the CPU runner's method (measure/cpu_timing.h), and compares its answer with autotune's
// saved output: the peer of `scripts/bench --target cpu`. OpenBLAS runs gemm and batch_matmul, oneDNN
// the convolutions. Prints one JSON object; exit 1 when the answers differ, 2 on bad input.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "measure/cpu_isa.h"
#include "measure/cpu_timing.h"
#include "measure/measure_result.h"
#include "measure/reference_check.h"
#include "tir/ops/operator.h"
#include "tools/cpu_peer/peer_kernel.h"

// Weak: each is there only where its library is (oneDNN brings OpenMP's runtime).
extern "C" void omp_set_num_threads(int) __attribute__((weak));
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace {

using namespace autotune;

struct Options {
  std::string inputs, isa;
  int repeats = 10, warmup = 1, threads = 0;
  double min_repeat_ms = 50, rtol = 1e-4;
};

[[noreturn]] void Fail(const std::string& msg, int status = 2) {
  std::fprintf(stderr, "autotune-cpu-peer: %s\n", msg.c_str());
  std::exit(status);
}

// The tensors io.json lists must be the workload's own (made again from its op, shape and epilogue),
// and each .npy of the shape it says: a peer reads exactly that many elements.
void CheckTensors(const cpu_peer::SavedWorkload& w, const std::string& dir) {
  auto workload = tir::MakeWorkload(w.manifest.at("op").get<std::string>(),
                                    w.manifest.at("shape_text").get<std::string>(), w.epilogue.Text());
  if (!workload) Fail("'" + dir + "/io.json': " + workload.error().message);
  if (w.inputs.size() != workload->inputs.size()) {
    Fail(fmt::format("'{}/io.json' lists {} inputs; {} takes {}", dir, w.inputs.size(), workload->CanonicalText(),
                     workload->inputs.size()));
  }
  for (size_t i = 0; i < w.inputs.size(); ++i) {
    if (w.inputs[i].shape != workload->inputs[i].shape) {
      Fail(fmt::format("'{}': input {} ({}) is not of {}'s shape", dir, i, workload->inputs[i].name,
                       workload->CanonicalText()));
    }
  }
  if (w.out_shape != workload->output.shape) Fail(fmt::format("'{}/io.json': the output is not of the workload's shape", dir));
}

cpu_peer::SavedWorkload ReadSaved(const std::string& dir) {
  cpu_peer::SavedWorkload w;
  std::ifstream f(dir + "/" + measure::kIoManifestFile);
  if (!f) Fail(fmt::format("no {} in '{}' (make it with `autotune measure --save-io DIR`)", measure::kIoManifestFile, dir));
  w.manifest = nlohmann::json::parse(f, nullptr, false);
  if (w.manifest.is_discarded() || !w.manifest.contains("tensors")) Fail("'" + dir + "/io.json' is not an io manifest");
  if (w.manifest.value("dtype", "float32") != "float32" || w.manifest.value("precision", "ieee") != "ieee") {
    Fail("the CPU peers compare float32 workloads in IEEE precision only");
  }
  auto epilogue = tir::ParseEpilogue(w.manifest.value("epilogue", ""));
  if (!epilogue) Fail(epilogue.error().message);
  w.epilogue = *epilogue;
  for (const auto& t : w.manifest.at("tensors")) {
    if (t.value("role", "") == "output") {
      w.out_shape = t.at("shape").get<std::vector<int64_t>>();
      continue;
    }
    auto a = measure::ReadNpy(dir + "/" + t.at("file").get<std::string>());
    if (!a) Fail(a.error().message);
    w.inputs.push_back(std::move(*a));
  }
  return w;
}

cpu_peer::SavedWorkload Load(const std::string& dir) {
  try {
    cpu_peer::SavedWorkload w = ReadSaved(dir);
    CheckTensors(w, dir);
    return w;
  } catch (const nlohmann::json::exception& e) {
    Fail(fmt::format("'{}/io.json' is not an io manifest: {}", dir, e.what()));
  }
}

Result<cpu_peer::PeerKernel> MakePeer(const cpu_peer::SavedWorkload& w, float* out) {
  const std::string op = w.manifest.at("op");
  const bool blas = op == "gemm" || op == "batch_matmul";
  if (!blas && op != "conv1d" && op != "conv2d" && op != "conv3d" && op != "conv2d_nhwc") {
    return MakeError("no CPU peer for " + op +
                     " (OpenBLAS: gemm, batch_matmul; oneDNN: conv1d, conv2d, conv3d, conv2d_nhwc)");
  }
  return blas ? cpu_peer::MakeOpenBlasKernel(w, out) : cpu_peer::MakeOneDnnKernel(w, out);
}

// One variant, timed: its result (median, spread), or an error when its answer is not autotune's.
nlohmann::json TimeVariant(const cpu_peer::PeerVariant& v, const Options& o, const measure::AlignedFloats& flush,
                           const measure::NpyArray* autotune_out, measure::AlignedFloats& out) {
  std::fill(out.data(), out.data() + out.size(), std::numeric_limits<float>::quiet_NaN());
  const auto t0 = std::chrono::steady_clock::now();
  v.call();
  const double first_ms = measure::MsSince(t0);
  nlohmann::json r = {{"variant", v.name}};
  if (autotune_out) {
    const double scale = measure::ReferenceScale(out.data(), out.size());
    const auto check = measure::CheckOutput(autotune_out->data.data(), out.data(), out.size(), scale, o.rtol);
    r["max_rel_error"] = check.max_rel_error;
    r["answers_match"] = check.correct;
    if (!check.correct) return r;
  }
  measure::CpuTimingPlan plan{o.warmup, o.repeats, o.min_repeat_ms, reinterpret_cast<const char*>(flush.data()),
                              static_cast<int64_t>(flush.size()) * 4};
  measure::MeasureResult m;
  m.latencies_ms = measure::TimeRepeats(v.call, first_ms, plan);
  measure::Summarize(m);
  r.update({{"latency_ms", m.median_ms}, {"latencies_ms", m.latencies_ms}, {"spread", m.spread}});
  return r;
}

int Run(const Options& o) {
  if (o.threads > 0) {
    if (omp_set_num_threads) omp_set_num_threads(o.threads);
    if (openblas_set_num_threads) openblas_set_num_threads(o.threads);
  }
  const cpu_peer::SavedWorkload w = Load(o.inputs);
  int64_t n = 1;
  for (int64_t d : w.out_shape) n *= d;
  measure::AlignedFloats out(n);
  auto peer = MakePeer(w, out.data());
  if (!peer) Fail(peer.error().message);
  std::optional<measure::NpyArray> autotune_out;
  if (auto a = measure::ReadNpy(o.inputs + "/" + measure::kSavedOutputFile)) autotune_out = std::move(*a);
  if (autotune_out && static_cast<int64_t>(autotune_out->data.size()) != n) Fail("output.npy has the wrong size");
  const measure::AlignedFloats flush = measure::MakeFlushBuffer(0);

  nlohmann::json variants = nlohmann::json::array(), best;
  for (const auto& v : peer->variants) {
    nlohmann::json r = TimeVariant(v, o, flush, autotune_out ? &*autotune_out : nullptr, out);
    if (r.contains("latency_ms") && (best.is_null() || r["latency_ms"] < best["latency_ms"])) best = r;
    variants.push_back(std::move(r));
  }
  nlohmann::json report = {{"peer", peer->library}, {"workload", w.manifest.value("workload", "")},
                           {"variants", variants}, {"rtol", o.rtol}, {"isa", o.isa.empty() ? "native" : o.isa}};
  const double flops = w.manifest.value("flops", 0.0);
  if (!best.is_null()) {
    report.update(best);
    report["gflops"] = flops / (best["latency_ms"].get<double>() * 1e6);
  } else {
    report["answers_match"] = false;  // every variant's answer differed from autotune's
  }
  std::printf("%s\n", report.dump().c_str());
  return report.value("answers_match", true) ? 0 : 1;
}

// --isa: OpenBLAS picks its kernels when it is loaded, so the libraries' variables are set and the
// program started again with them (once: the second start finds them set).
void RestrictLibrariesTo(const std::string& name, char** argv) {
  auto isa = measure::FindCpuIsa(name);
  if (!isa) Fail(isa.error().message);
  if (!measure::HostRuns(*isa)) Fail(fmt::format("this host cannot run {} code", name));
  const char* set = std::getenv("OPENBLAS_CORETYPE");
  if (isa->openblas_coretype.empty() || (set && set == isa->openblas_coretype)) return;
  setenv("OPENBLAS_CORETYPE", isa->openblas_coretype.c_str(), 1);
  setenv("ONEDNN_MAX_CPU_ISA", isa->onednn_max_isa.c_str(), 1);
  execv("/proc/self/exe", argv);
  Fail(fmt::format("cannot start again with {}'s library settings", name));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"autotune-cpu-peer: a CPU library's operator (OpenBLAS: gemm, batch_matmul; oneDNN: conv1d, conv2d, "
               "conv3d) on the inputs `autotune measure --save-io DIR` saved, timed as autotune times its cpu "
               "kernels, its answer compared with autotune's output; one JSON object on stdout",
               "autotune-cpu-peer"};
  Options o;
  app.add_option("--inputs", o.inputs, "directory written by `autotune measure --save-io`")->required();
  app.add_option("--repeats", o.repeats, "timed repeats (the median is the figure)")->check(CLI::Range(1, 1000));
  app.add_option("--min-repeat-ms", o.min_repeat_ms, "each repeat lasts at least this long")->check(CLI::Range(0.0, 1e4));
  app.add_option("--warmup", o.warmup, "untimed calls after the first")->check(CLI::Range(0, 1000));
  app.add_option("--threads", o.threads, "threads of the library (0: all cores)")->check(CLI::Range(0, 4096));
  app.add_option("--isa", o.isa, "run the libraries' kernels of this instruction set only (" + measure::CpuIsaNames() +
                              "), as `--target cpu:ISA` builds autotune's");
  app.add_option("--rtol", o.rtol, "tolerance of the answer check (autotune's reference-check rule)")->check(CLI::Range(0.0, 1.0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    Fail(e.what());
  }
  if (!o.isa.empty()) RestrictLibrariesTo(o.isa, argv);
  return Run(o);
}
