#include "measure/cpu_runner.h"

#include "measure/subprocess.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "measure/io_dump.h"
#include "measure/output_layout.h"
#include "measure/c_call.h"
#include "measure/cpu_timing.h"
#include "measure/thread_pinning.h"
#include "measure/reference_check.h"

namespace autotune::measure {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// ---- child side -----------------------------------------------------------------------------------
// What the child sends back through the pipe (both ends are this binary), then num_latencies doubles.
struct ChildReport {
  int32_t kind = 0;  // ErrorKind
  int32_t num_latencies = 0;
  double max_rel_error = 0;
  char message[1024] = {};
};

void WriteToPipe(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    c += w;
    n -= static_cast<size_t>(w);
  }
}

[[noreturn]] void Report(int fd, ErrorKind kind, const std::string& msg, double max_rel_error,
                         const std::vector<double>& latencies) {
  ChildReport r;
  r.kind = static_cast<int32_t>(kind);
  r.num_latencies = static_cast<int32_t>(latencies.size());
  r.max_rel_error = max_rel_error;
  std::snprintf(r.message, sizeof r.message, "%s", msg.c_str());
  WriteToPipe(fd, &r, sizeof r);
  WriteToPipe(fd, latencies.data(), latencies.size() * sizeof(double));
  _exit(0);  // no atexit handlers or destructors of the parent's objects
}

struct ChildArgs {
  const MeasureConfig* config;
  const WorkloadData* data;
  const BuildResult* build;
  OutputLayout outputs;
  tir::DType out_dtype;
  double extra_rtol;  // PrecisionTolerance of the workload
  const char* flush;
  int64_t flush_bytes;
  pid_t parent;
  double stop_above_ms;  // RepeatScreen
  std::vector<tir::DType> input_dtypes;
};

// OpenMP reads OMP_NUM_THREADS once, when it is loaded: for a kernel that loads it, the variable set
// before dlopen serves; where this process had it loaded before the fork (XGBoost uses it), only a
// call of omp_set_num_threads reaches the kernel's parallel regions.
void SetKernelThreads(void* kernel_lib, int threads) {
  if (threads <= 0) return;
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(kernel_lib, "omp_set_num_threads"))) set(threads);
}

// A kernel's packed inputs, made once before it is checked or timed (as a client packs weights
// once): each pack step's function fills a tensor of its own, which replaces the input in `args`.
Result<void> PackInputs(void* lib, const std::vector<PackStep>& packs, const std::vector<tir::DType>& dtypes,
                        std::vector<void*>& args, std::vector<KernelTensor>& packed) {
  packed.reserve(packs.size());
  for (const PackStep& p : packs) {
    void* fn = dlsym(lib, p.entry.c_str());
    if (!fn) return MakeError("pack function " + p.entry + " not found in the kernel");
    if (p.param < 0 || p.param >= static_cast<int>(dtypes.size())) return MakeError("a pack step names no input");
    packed.emplace_back(dtypes[p.param], p.packed_elements);
    CallPackFunction(fn, args[p.param], packed.back().data());
    args[p.param] = packed.back().data();
  }
  return {};
}

[[noreturn]] void ChildMain(int fd, const ChildArgs& a) {
  // A crash must end the child with its signal, quietly: default handlers, no core file, and no
  // orphan if the tuner itself dies.
  ResetSignalsAndCoreLimit();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != a.parent) _exit(1);
  const MeasureConfig& cfg = *a.config;
  if (cfg.num_threads > 0) setenv("OMP_NUM_THREADS", std::to_string(cfg.num_threads).c_str(), 1);

  void* lib = dlopen(a.build->artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) Report(fd, ErrorKind::kRunError, std::string("cannot load the kernel: ") + dlerror(), 0, {});
  void* fn = dlsym(lib, a.build->entry.c_str());
  if (!fn) Report(fd, ErrorKind::kRunError, "entry " + a.build->entry + " not found in the kernel", 0, {});
  SetKernelThreads(lib, cfg.num_threads);
  if (cfg.pin_threads) PinOpenMpThreads(lib);

  KernelTensor kernel_out(a.out_dtype, a.outputs.buffer_elements);
  kernel_out.FillNaN();
  std::vector<void*> args;
  for (size_t i = 0; i < a.data->inputs.size(); ++i) args.push_back(a.data->KernelInput(i));
  for (int64_t offset : a.outputs.offsets) {
    args.push_back(static_cast<char*>(kernel_out.data()) + offset * tir::BytesOf(a.out_dtype));
  }
  std::vector<KernelTensor> prepacked;
  if (auto packed = PackInputs(lib, a.build->packs, a.input_dtypes, args, prepacked); !packed) {
    Report(fd, ErrorKind::kRunError, packed.error().message, 0, {});
  }
  auto call = [n = args.size()](void* f, void* const* a) { CallCKernel(f, a, n); };

  auto t0 = Clock::now();
  call(fn, args.data());
  double one_ms = Ms(Clock::now() - t0);
  AlignedFloats out(a.outputs.buffer_elements);
  kernel_out.Unpack(out.data());
  a.outputs.Compact(out.data());
  if (auto saved = WriteSavedOutputs(cfg.save_outputs, out.data()); !saved) {
    Report(fd, ErrorKind::kRunError, "saving the output: " + saved.error().message, 0, {});
  }
  const int64_t n = a.outputs.total;
  const CheckResult check = CheckOutput(out.data(), a.data->reference.data(), n, a.data->reference_scale,
                                        OutputTolerance(cfg.rtol, a.out_dtype) + a.extra_rtol);
  if (!check.correct) Report(fd, ErrorKind::kWrongAnswer, check.Describe(n), check.max_rel_error, {});

  // The checked run was the first call.
  CpuTimingPlan plan{cfg.warmup, cfg.repeats, cfg.min_repeat_ms, a.flush, a.flush_bytes, a.stop_above_ms};
  const std::vector<double> latencies = TimeRepeats([&] { call(fn, args.data()); }, one_ms, plan);
  Report(fd, ErrorKind::kNone, "", check.max_rel_error, latencies);
}

}  // namespace

CpuRunner::CpuRunner(MeasureConfig config) : config_(std::move(config)), screen_(config_.screen_ratio) {}

const char* CpuRunner::FlushBuffer() {
  if (!flush_.data()) {
    flush_ = MakeFlushBuffer(config_.flush_bytes);
  }
  return reinterpret_cast<const char*>(flush_.data());
}

std::vector<MeasureResult> CpuRunner::Run(const tir::Workload& workload, const std::vector<BuildResult>& builds) {
  std::vector<MeasureResult> results;
  std::shared_ptr<const WorkloadData> data;
  const std::string key = WorkloadDataKey(workload, config_.seed);
  for (const auto& b : builds) {
    if (!b.ok()) {
      MeasureResult r = MeasureResult::Error(b.error_kind, b.error_message);
      r.build_seconds = b.build_seconds;
      results.push_back(std::move(r));
      continue;
    }
    if (!data) data = data_cache_.Get(workload, config_.seed);
    MeasureResult r = RunOne(workload, *data, b, screen_.StopAboveMs(key));
    if (r.correct) screen_.Record(key, r.median_ms);
    r.build_seconds = b.build_seconds;
    results.push_back(std::move(r));
  }
  return results;
}

MeasureResult CpuRunner::RunOne(const tir::Workload& workload, const WorkloadData& data, const BuildResult& build,
                                double stop_above_ms) {
  const size_t nparams = workload.NumTensors();
  if (build.num_params != static_cast<int>(nparams)) {
    return MeasureResult::Error(ErrorKind::kRunError, fmt::format("the kernel takes {} buffers, the workload has {}",
                                                                  build.num_params, nparams));
  }
  if (nparams > kMaxKernelParams) {
    return MeasureResult::Error(ErrorKind::kRunError, fmt::format("more than {} buffers", kMaxKernelParams));
  }
  ChildArgs args{&config_, &data,   &build,   OutputLayout::Of(workload), workload.output.dtype,
                 PrecisionTolerance(workload.precision), nullptr, 0, getpid(), stop_above_ms, {}};
  for (const auto& in : workload.inputs) args.input_dtypes.push_back(in.dtype);
  if (config_.flush_cache) {
    args.flush = FlushBuffer();
    args.flush_bytes = flush_.size() * 4;
  }

  const auto t0 = Clock::now();
  const auto deadline = DeadlineAfter(t0, config_.run_timeout_s);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return MeasureResult::Error(ErrorKind::kRunError, std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return MeasureResult::Error(ErrorKind::kRunError, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);  // a Ctrl-C at the terminal is the parent's to handle (it finishes the batch)
    close(fds[0]);
    ChildMain(fds[1], args);
  }
  close(fds[1]);

  std::string bytes;
  ProcessResult ended;
  ended.timed_out = ReadUntilClosed(fds[0], deadline, size_t{64} << 20, &bytes);
  close(fds[0]);
  ReapBy(pid, pid, deadline, &ended);  // one that closed its output but kept running gets the limit too

  MeasureResult r;
  r.run_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  auto fail = [&](ErrorKind kind, std::string msg) {
    r.error_kind = kind;
    r.error_message = std::move(msg);
    return r;
  };
  if (ended.timed_out) return fail(ErrorKind::kRunTimeout, fmt::format("the run exceeded {:g} s", config_.run_timeout_s));
  if (ended.term_signal != 0) return fail(ErrorKind::kRunError, "the kernel crashed: " + DescribeSignal(ended.term_signal));
  ChildReport rep;
  if (bytes.size() < sizeof rep) {
    return fail(ErrorKind::kRunError,
                fmt::format("the kernel process exited with code {} without a result", ended.exit_code));
  }
  std::memcpy(&rep, bytes.data(), sizeof rep);
  rep.message[sizeof rep.message - 1] = 0;
  // A kernel that scribbles over its process can garble the report too: trust only a sane one.
  const auto kind = static_cast<ErrorKind>(rep.kind);
  const bool sane_kind = kind == ErrorKind::kNone || kind == ErrorKind::kRunError || kind == ErrorKind::kWrongAnswer;
  if (!sane_kind || rep.num_latencies < 0 || rep.num_latencies > config_.repeats ||
      bytes.size() != sizeof rep + rep.num_latencies * sizeof(double)) {
    return fail(ErrorKind::kRunError, "the kernel process sent a malformed result");
  }
  r.latencies_ms.resize(rep.num_latencies);
  if (rep.num_latencies > 0) {  // an empty vector's data() may be null, which memcpy must not get
    std::memcpy(r.latencies_ms.data(), bytes.data() + sizeof rep, rep.num_latencies * sizeof(double));
  }
  r.max_rel_error = rep.max_rel_error;
  if (kind != ErrorKind::kNone) {
    r.latencies_ms.clear();
    return fail(kind, rep.message);
  }
  r.correct = true;
  Summarize(r);
  return r;
}

std::unique_ptr<Runner> MakeCpuRunner(const MeasureConfig& config) { return std::make_unique<CpuRunner>(config); }

}  // namespace autotune::measure
