#include "measure/cuda_executor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "measure/io_dump.h"
#include "measure/output_layout.h"
#include "measure/reference_check.h"
#include "measure/repeat_screen.h"
#include "measure/subprocess.h"

namespace autotune::measure {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kStartTimeoutS = 120;             // load the driver, open the device
constexpr double kExecutorExitGraceS = 10;                 // an executor that said it exits
constexpr uint32_t kFrameMagic = 0x43555845;       // "EXUC"
// A NaN as float32 and, in each of its halves, as float16 and bfloat16: one pattern poisons an
// output of any element type.
constexpr uint32_t kPoison = 0x7fff7fff;
constexpr int64_t kMinFlushBytes = int64_t{8} << 20;
constexpr int64_t kMaxRunsPerRepeat = 1000000;
// With MeasureConfig::cuda_graph, a graph holds at most this many runs of the module; a repeat
// launches it as often as its runs need (a graph of a million nodes would take long to build).
constexpr int64_t kMaxRunsPerGraph = 1024;

// How long the executor may take to set a workload up: make the inputs on the CPU, copy them, and
// run the naive reference kernel (slow by design).
double WorkloadTimeout(const MeasureConfig& c) { return std::max(60.0, 2 * c.run_timeout_s); }

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  uint32_t json_bytes = 0;
  uint64_t blob_bytes = 0;
};

bool SendFrame(int fd, const std::string& text, const std::string& blob) {
  FrameHeader h;
  h.json_bytes = static_cast<uint32_t>(text.size());
  h.blob_bytes = blob.size();
  return SendFully(fd, &h, sizeof h) && SendFully(fd, text.data(), text.size()) &&
         SendFully(fd, blob.data(), blob.size());
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// JSON has no infinity: a non-finite error travels as null.
json Finite(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double FromFinite(const json& j) {
  return j.is_number() ? j.get<double>() : std::numeric_limits<double>::infinity();
}

json LaunchToJson(const tir::CudaKernelLaunch& k) {
  return {{"entry", k.entry}, {"grid", k.grid}, {"block", k.block}, {"smem", k.dynamic_shared_bytes}};
}

json ModuleToJson(const CudaModuleRun& m) {
  json kernels = json::array();
  for (const auto& k : m.kernels) kernels.push_back(LaunchToJson(k));
  return {{"cubin", m.cubin_path}, {"kernels", kernels}, {"workspaces", m.workspace_bytes}};
}

CudaModuleRun ModuleFromJson(const json& j) {
  CudaModuleRun m;
  m.cubin_path = j.at("cubin").get<std::string>();
  for (const auto& k : j.at("kernels")) {
    tir::CudaKernelLaunch l;
    l.entry = k.at("entry").get<std::string>();
    l.grid = k.at("grid").get<std::array<int64_t, 3>>();
    l.block = k.at("block").get<std::array<int64_t, 3>>();
    l.dynamic_shared_bytes = k.at("smem").get<int64_t>();
    m.kernels.push_back(std::move(l));
  }
  m.workspace_bytes = j.at("workspaces").get<std::vector<int64_t>>();
  return m;
}

// An element type name of a workload request ("float32", "float16", "bfloat16"); throws on others.
tir::DType ElementType(const json& name) {
  const auto t = tir::ParseElementType(name.get<std::string>());
  if (!t || (*t != tir::DType::kFloat32 && !tir::IsHalf(*t))) throw std::invalid_argument("unknown element type " + name.dump());
  return *t;
}

// One element type per input.
std::vector<tir::DType> ElementTypes(const json& names, size_t count) {
  std::vector<tir::DType> types;
  for (const auto& n : names) types.push_back(ElementType(n));
  if (types.size() != count) throw std::invalid_argument("one element type per input expected");
  return types;
}

std::vector<std::string> ElementTypeNames(const std::vector<tir::DType>& types) {
  std::vector<std::string> names;
  for (tir::DType t : types) names.emplace_back(tir::DTypeName(t));
  return names;
}

// ==== the executor process ========================================================================

// A blocking read of one frame; false at end-of-file or on a malformed frame.
bool ReadFrameBlocking(int fd, json& j, std::string& blob) {
  FrameHeader h;
  if (!ReadFully(fd, &h, sizeof h) || h.magic != kFrameMagic) return false;
  std::string text(h.json_bytes, '\0');
  blob.assign(h.blob_bytes, '\0');
  if (!ReadFully(fd, text.data(), text.size()) || !ReadFully(fd, blob.data(), blob.size())) return false;
  j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return !j.is_discarded();
}

// Wall seconds of consecutive phases: Mark(name) ends the phase begun by the previous mark (or by
// clear()) and returns its length.
class PhaseClock {
 public:
  void clear() {
    phases_.clear();
    last_ = Clock::now();
  }
  double Mark(const char* name) {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    phases_.emplace_back(name, s);
    last_ = now;
    return s;
  }
  // "name=ms name=ms ..."
  std::string Describe() const {
    std::string out;
    for (const auto& [name, s] : phases_) out += fmt::format("{}{}={:.3f}", out.empty() ? "" : " ", name, s * 1e3);
    return out;
  }

 private:
  std::vector<std::pair<const char*, double>> phases_;
  Clock::time_point last_ = Clock::now();
};

// Device memory for the candidates' workspaces (split-K's partial sums, stages kept between kernels),
// kept from one candidate to the next: on the H200 a cuMemAlloc and cuMemFree of a few megabytes took
// up to 10 and 20-45 ms, together about as long as the candidate's timed repeats. Slot i serves every candidate's i-th
// workspace and only grows.
class WorkspacePool {
 public:
  explicit WorkspacePool(const CudaDriver& d) : d_(d) {}
  ~WorkspacePool() { Clear(); }
  WorkspacePool(const WorkspacePool&) = delete;
  WorkspacePool& operator=(const WorkspacePool&) = delete;

  // At least `bytes` of device memory for workspace `index`.
  Result<cu::DevicePtr> Get(size_t index, int64_t bytes) {
    if (index >= slots_.size()) slots_.resize(index + 1);
    Slot& s = slots_[index];
    if (s.bytes >= bytes) return s.ptr;
    Release(s);
    cu::Result r = d_.MemAlloc(&s.ptr, static_cast<size_t>(bytes));
    if (r != cu::kSuccess) {  // the other slots may hold what this one needs: free them and try again
      Clear();
      slots_.resize(index + 1);
      r = d_.MemAlloc(&slots_[index].ptr, static_cast<size_t>(bytes));
    }
    if (r != cu::kSuccess) {
      slots_[index].ptr = 0;
      return MakeError(fmt::format("{} (cuMemAlloc of a {}-byte workspace)", d_.ErrorText(r), bytes));
    }
    slots_[index].bytes = bytes;
    return slots_[index].ptr;
  }

  void Clear() {
    for (Slot& s : slots_) Release(s);
    slots_.clear();
  }

 private:
  struct Slot {
    cu::DevicePtr ptr = 0;
    int64_t bytes = 0;
  };
  void Release(Slot& s) {
    if (s.ptr) d_.MemFree(s.ptr);
    s = Slot{};
  }
  const CudaDriver& d_;
  std::vector<Slot> slots_;
};

class Executor {
 public:
  Executor(const CudaDriver& driver, const MeasureConfig& config) : d_(driver), cfg_(config) {}

  // Opens the device: the ready message's device info, or why not.
  Result<CudaDeviceInfo> Open() {
    auto info = QueryCudaDevice(d_, cfg_.cuda_device);  // calls cuInit
    if (!info) return info.error();
    info_ = *info;
    Result<void> r = Check(d_.DeviceGet(&dev_, cfg_.cuda_device), "cuDeviceGet");
    if (r) r = Check(d_.DevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
    if (r) r = Check(d_.CtxSetCurrent(ctx_), "cuCtxSetCurrent");
    if (r) r = Check(d_.StreamCreate(&stream_, 0), "cuStreamCreate");
    // Waiting for the timed repeats sleeps: spinning took a CPU from the compilers and the search
    // for as long as the repeats ran (the events' timestamps are taken on the GPU either way).
    if (r) r = Check(d_.EventCreate(&start_, cu::kEventBlockingSync), "cuEventCreate");
    if (r) r = Check(d_.EventCreate(&stop_, cu::kEventBlockingSync), "cuEventCreate");
    if (r && cfg_.flush_cache) {
      flush_bytes_ = cfg_.flush_bytes > 0 ? cfg_.flush_bytes : std::max(2 * info_.l2_bytes, kMinFlushBytes);
      r = Check(d_.MemAlloc(&flush_, static_cast<size_t>(flush_bytes_)), "cuMemAlloc of the L2 flush buffer");
    }
    if (!r) return r.error();
    return info_;
  }

  // {"ok": true} or {"ok": false, "error": ..., "fatal": ...}
  json SetWorkload(const json& req, const std::string& blob) {
    auto fail = [&](const std::string& msg) {
      workload_ready_ = false;
      return json{{"ok", false}, {"error", msg}, {"fatal", ContextBroken()}};
    };
    FreeWorkload();
    std::vector<int64_t> counts;
    std::vector<tir::DType> types;
    std::vector<int64_t> out_counts;
    uint64_t seed = 1;
    std::optional<CudaModuleRun> reference;
    try {
      counts = req.at("inputs").get<std::vector<int64_t>>();
      types = ElementTypes(req.at("input_types"), counts.size());
      output_type_ = ElementType(req.at("output_type"));
      extra_rtol_ = req.value("extra_rtol", 0.0);
      out_counts = req.at("outputs").get<std::vector<int64_t>>();
      seed = req.at("seed").get<uint64_t>();
      if (!req.at("reference").is_null()) reference = ModuleFromJson(req.at("reference"));
    } catch (const std::exception& e) {
      return fail(std::string("malformed workload request: ") + e.what());
    }
    if (out_counts.empty() || *std::min_element(out_counts.begin(), out_counts.end()) <= 0) {
      return fail("the workload has an empty output");
    }

    // Inputs: made here with the generator every runner uses, rounded to their types as the host
    // data is (measure/workload_data.h), kept on the host and in a pristine copy on the GPU.
    std::vector<AlignedFloats> values = MakeRandomInputs(counts, seed);
    for (size_t i = 0; i < values.size(); ++i) {
      host_inputs_.push_back(RoundAndPack(values[i].data(), values[i].size(), types[i]));
    }
    values.clear();
    for (const auto& h : host_inputs_) {
      const size_t bytes = std::max<size_t>(h.bytes(), 4);
      cu::DevicePtr p = 0, copy = 0;
      if (auto r = Check(d_.MemAlloc(&copy, bytes), "cuMemAlloc of an input's pristine copy"); !r) {
        return fail(r.error().message);
      }
      pristine_.push_back(copy);
      if (auto r = Check(d_.MemAlloc(&p, bytes), "cuMemAlloc of an input"); !r) return fail(r.error().message);
      inputs_.push_back(p);
    }
    pristine_stale_ = true;
    if (auto r = RestoreInputs(); !r) return fail(r.error().message);
    outputs_ = OutputLayout::Of(out_counts, output_type_);
    const int64_t out_n = outputs_.total;
    // Whole 32-bit words, so that the poison covers an odd number of 16-bit elements.
    const size_t out_bytes = OutputBytes();
    if (auto r = Check(d_.MemAlloc(&output_, out_bytes), "cuMemAlloc of the output"); !r) {
      return fail(r.error().message);
    }
    // Page-locked, the output copies back several times faster; pageable memory where that fails.
    void* pinned = nullptr;
    if (d_.MemAllocHost(&pinned, out_bytes) == cu::kSuccess) {
      host_output_ = pinned;
    } else {
      pageable_output_.assign(out_bytes, 0);
    }
    if (output_type_ != tir::DType::kFloat32) widened_output_.assign(outputs_.buffer_elements, 0.0f);

    // The reference output: computed here by the naive module (in the output's type), or sent by
    // the parent (float32).
    reference_.assign(out_n, 0.0f);
    reference_rounding_ = reference ? ReferenceRounding::kOutputType : ReferenceRounding::kFloat32;
    if (reference) {
      Run run(*this, *reference);
      if (auto r = run.Prepare(); !r) return fail("the reference kernel: " + r.error().message);
      if (auto r = run.Checked(HostOutput()); !r) return fail("the reference kernel: " + r.error().message);
      const float* values = OutputValues();
      std::copy(values, values + out_n, reference_.begin());
      int64_t nan = 0;
      for (float v : reference_) nan += std::isnan(v);
      if (nan > 0) {
        return fail(fmt::format("the reference kernel left {} of {} output elements NaN (unwritten?)", nan, out_n));
      }
    } else {
      if (blob.size() != static_cast<size_t>(out_n) * sizeof(float)) {
        return fail(fmt::format("the host reference has {} bytes, the output {}", blob.size(), out_n * 4));
      }
      std::memcpy(reference_.data(), blob.data(), blob.size());
    }
    reference_scale_ = ReferenceScale(reference_.data(), out_n);
    workload_ready_ = true;
    return json{{"ok", true}};
  }

  // {"kind", "message", "max_rel_error", "latencies", "fatal", "timed_s"}: timed_s is the wall time of
  // the warm-up and timed repeats, the rest of a run's time being loading, checking and unloading.
  // `phases` gets where the time went, phase by phase (for AUTOTUNE_EXECUTOR_TRACE).
  json Measure(const json& req, PhaseClock& phases) {
    double timed_s = 0;
    auto answer = [&](ErrorKind kind, const std::string& msg, double rel, const std::vector<double>& lat) {
      const bool fatal = kind == ErrorKind::kRunError && ContextBroken();
      return json{{"kind", ErrorKindName(kind)}, {"message", msg}, {"max_rel_error", Finite(rel)},
                  {"latencies", lat},           {"fatal", fatal}, {"timed_s", timed_s}};
    };
    if (!workload_ready_) return answer(ErrorKind::kRunError, "the executor has no workload", 0, {});
    CudaModuleRun module;
    try {
      module = ModuleFromJson(req.at("module"));
    } catch (const json::exception& e) {
      return answer(ErrorKind::kRunError, std::string("malformed run request: ") + e.what(), 0, {});
    }
    const double stop_above_ms = req.value("stop_above_ms", 0.0);
    phases.clear();
    Run run(*this, module);
    if (auto r = run.Prepare(); !r) return answer(ErrorKind::kRunError, r.error().message, 0, {});
    phases.Mark("load");
    // A candidate that wrote past its output (into an input allocation beside it) must not spoil
    // the data of the next ones: every candidate starts from the pristine inputs.
    if (auto r = RestoreInputs(); !r) return answer(ErrorKind::kRunError, r.error().message, 0, {});
    phases.Mark("restore");
    // A failed candidate may have written into the pristine inputs too: the next one restores them
    // from the host.
    pristine_stale_ = true;
    auto one = run.Checked(HostOutput());
    if (!one) return answer(ErrorKind::kRunError, one.error().message, 0, {});
    const float* out = OutputValues();
    phases.Mark("checked_run");
    if (auto saved = WriteSavedOutputs(cfg_.save_outputs, out); !saved) {
      return answer(ErrorKind::kRunError, "saving the output: " + saved.error().message, 0, {});
    }
    const CheckResult check = CheckOutput(out, reference_.data(), outputs_.total, reference_scale_,
                                          OutputTolerance(cfg_.rtol, output_type_, reference_rounding_) + extra_rtol_);
    if (!check.correct) {
      return answer(ErrorKind::kWrongAnswer, check.Describe(outputs_.total), check.max_rel_error, {});
    }
    phases.Mark("compare");
    auto latencies = run.Timed(*one, stop_above_ms);
    timed_s = phases.Mark("timed");
    if (!latencies) return answer(ErrorKind::kRunError, latencies.error().message, check.max_rel_error, {});
    pristine_stale_ = false;
    return answer(ErrorKind::kNone, "", check.max_rel_error, *latencies);
  }

 private:
  // One module on the current workload: loaded, its functions found and its workspaces allocated;
  // all unloaded and freed at the end.
  class Run {
   public:
    Run(Executor& e, const CudaModuleRun& m) : e_(e), m_(m) {}
    ~Run() {
      if (module_) e_.d_.ModuleUnload(module_);
    }

    Result<void> Prepare() {
      const CudaDriver& d = e_.d_;
      std::ifstream f(m_.cubin_path, std::ios::binary);
      std::ostringstream read;
      if (f.is_open()) read << f.rdbuf();
      const std::string image = read.str();
      if (image.empty()) return MakeError("cannot read the cubin " + m_.cubin_path);
      if (auto r = e_.Check(d.ModuleLoadData(&module_, image.data()), "cuModuleLoadData"); !r) return r;
      for (const auto& k : m_.kernels) {
        for (int i = 0; i < 3; ++i) {
          if (k.grid[i] < 1 || k.block[i] < 1 || k.grid[i] > UINT32_MAX || k.block[i] > UINT32_MAX) {
            return MakeError(fmt::format("kernel {} has a bad launch shape", k.entry));
          }
        }
        if (k.dynamic_shared_bytes < 0 || k.dynamic_shared_bytes > INT32_MAX) {
          return MakeError(fmt::format("kernel {} asks for {} bytes of shared memory", k.entry, k.dynamic_shared_bytes));
        }
        cu::Function fn = nullptr;
        if (auto r = e_.Check(d.ModuleGetFunction(&fn, module_, k.entry.c_str()), "cuModuleGetFunction " + k.entry);
            !r) {
          return r;
        }
        if (k.dynamic_shared_bytes > cu::kDefaultSharedMemoryLimit) {
          auto r = e_.Check(d.FuncSetAttribute(fn, cu::kFuncMaxDynamicSharedSizeBytes,
                                               static_cast<int>(k.dynamic_shared_bytes)),
                            fmt::format("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, {}) of {}",
                                        k.dynamic_shared_bytes, k.entry));
          if (!r) return r;
        }
        functions_.push_back(fn);
      }
      // Arguments: the inputs, the outputs, then the workspaces; every kernel takes them all.
      args_ = e_.inputs_;
      for (int64_t offset : e_.outputs_.offsets) {
        args_.push_back(e_.output_ + static_cast<cu::DevicePtr>(offset * tir::BytesOf(e_.output_type_)));
      }
      for (size_t i = 0; i < m_.workspace_bytes.size(); ++i) {
        cu::DevicePtr p = 0;
        if (const int64_t bytes = m_.workspace_bytes[i]; bytes > 0) {
          auto w = e_.workspaces_.Get(i, bytes);
          if (!w) return w.error();
          p = *w;
          workspaces_.emplace_back(p, bytes);
        }
        args_.push_back(p);
      }
      for (auto& a : args_) arg_ptrs_.push_back(&a);
      return {};
    }

    // Poisons the output and the workspaces, runs the module once and copies the output (in its
    // type) to `out`: the time of the run (ms). Poisoned workspaces: a kernel that reads what it never
    // wrote fails the check rather than passing on what an earlier candidate left there (workspaces
    // are reused).
    Result<double> Checked(void* out) {
      const CudaDriver& d = e_.d_;
      auto r = e_.Check(d.MemsetD32Async(e_.output_, kPoison, (e_.OutputBytes() + 3) / 4, e_.stream_),
                        "cuMemsetD32Async poisoning the output");
      if (!r) return r.error();
      for (const auto& [p, bytes] : workspaces_) {
        r = e_.Check(d.MemsetD32Async(p, kPoison, static_cast<size_t>(bytes) / 4, e_.stream_),
                     "cuMemsetD32Async poisoning a workspace");
        if (!r) return r.error();
      }
      auto ms = TimeRuns(1, "the checked run");
      if (!ms) return ms.error();
      r = e_.Check(d.MemcpyDtoH(out, e_.output_, e_.OutputBytes()), "cuMemcpyDtoH of the output");
      if (!r) return r.error();
      return *ms;
    }

    // Warm-up, then the timed repeats: ms per run of each repeat.
    Result<std::vector<double>> Timed(double one_ms, double stop_above_ms) {
      const MeasureConfig& c = e_.cfg_;
      // The checked run was the first warm-up; a module that alone outlasts a repeat is warm after it.
      for (int i = 0; i < c.warmup && one_ms < c.min_repeat_ms; ++i) {
        auto ms = TimeRuns(1, "a warm-up run");
        if (!ms) return ms.error();
        one_ms = *ms;
      }
      const double want = std::ceil(c.min_repeat_ms / std::max(one_ms, 1e-4));
      int64_t number = static_cast<int64_t>(std::clamp(want, 1.0, static_cast<double>(kMaxRunsPerRepeat)));
      std::optional<CapturedRuns> graph;
      if (c.cuda_graph) {
        auto g = Capture(std::min(number, kMaxRunsPerGraph));
        if (!g) return g.error();
        graph.emplace(std::move(*g));
        number = (number + graph->runs - 1) / graph->runs * graph->runs;  // whole graph launches
      }
      std::vector<double> latencies;
      for (int rep = 0; rep < c.repeats; ++rep) {
        if (e_.flush_) {
          // Writing 2 x L2 on the same stream evicts the module's data before the start event.
          auto r = e_.Check(e_.d_.MemsetD8Async(e_.flush_, static_cast<unsigned char>(rep), e_.flush_bytes_, e_.stream_),
                            "cuMemsetD8Async flushing the L2");
          if (!r) return r.error();
        }
        auto ms = graph ? TimeGraph(*graph, number / graph->runs) : TimeRuns(number, "a timed repeat");
        if (!ms) return ms.error();
        latencies.push_back(*ms / static_cast<double>(number));
        if (RepeatScreen::StopAfter(latencies, stop_above_ms)) break;
      }
      return latencies;
    }

   private:
    // `runs` runs of the module captured in one instantiated graph; destroyed with it.
    struct CapturedRuns {
      const CudaDriver* d = nullptr;
      cu::Graph graph = nullptr;
      cu::GraphExec exec = nullptr;
      int64_t runs = 0;
      CapturedRuns() = default;
      CapturedRuns(CapturedRuns&& o) noexcept
          : d(o.d), graph(std::exchange(o.graph, nullptr)), exec(std::exchange(o.exec, nullptr)), runs(o.runs) {}
      CapturedRuns& operator=(CapturedRuns&&) = delete;
      ~CapturedRuns() {
        if (exec) d->GraphExecDestroy(exec);
        if (graph) d->GraphDestroy(graph);
      }
    };

    // Launches every kernel of the module `n` times on the stream.
    Result<void> Launch(int64_t n, const char* what) {
      const CudaDriver& d = e_.d_;
      for (int64_t i = 0; i < n; ++i) {
        for (size_t k = 0; k < functions_.size(); ++k) {
          const auto& l = m_.kernels[k];
          const cu::Result res = d.LaunchKernel(
              functions_[k], static_cast<unsigned>(l.grid[0]), static_cast<unsigned>(l.grid[1]),
              static_cast<unsigned>(l.grid[2]), static_cast<unsigned>(l.block[0]), static_cast<unsigned>(l.block[1]),
              static_cast<unsigned>(l.block[2]), static_cast<unsigned>(l.dynamic_shared_bytes), e_.stream_,
              arg_ptrs_.data(), nullptr);
          if (auto r = e_.Check(res, fmt::format("cuLaunchKernel {} in {}", l.entry, what)); !r) return r;
        }
      }
      return {};
    }

    // `runs` runs captured from the stream into a graph, instantiated and launched once untimed (its
    // first launch uploads it).
    Result<CapturedRuns> Capture(int64_t runs) {
      const CudaDriver& d = e_.d_;
      if (!d.HasGraphs()) return MakeError("this CUDA driver has no graphs (cuda_graph timing needs CUDA 11.4 or later)");
      CapturedRuns g;
      g.d = &d;
      g.runs = runs;
      auto r = e_.Check(d.StreamBeginCapture(e_.stream_, cu::kStreamCaptureModeThreadLocal), "cuStreamBeginCapture");
      if (!r) return r.error();
      auto launched = Launch(runs, "a captured repeat");
      // The capture ends whatever happened, so the stream is usable again.
      auto ended = e_.Check(d.StreamEndCapture(e_.stream_, &g.graph), "cuStreamEndCapture");
      if (!launched) return launched.error();
      if (!ended) return ended.error();
      r = e_.Check(d.GraphInstantiateWithFlags(&g.exec, g.graph, 0), "cuGraphInstantiateWithFlags");
      if (!r) return r.error();
      auto first = TimeGraph(g, 1);
      if (!first) return first.error();
      return Result<CapturedRuns>(std::move(g));
    }

    // Launches the graph `launches` times between two events: the elapsed ms.
    Result<double> TimeGraph(const CapturedRuns& g, int64_t launches) {
      const CudaDriver& d = e_.d_;
      if (auto r = e_.Check(d.EventRecord(e_.start_, e_.stream_), "cuEventRecord"); !r) return r.error();
      for (int64_t i = 0; i < launches; ++i) {
        if (auto r = e_.Check(d.GraphLaunch(g.exec, e_.stream_), "cuGraphLaunch of a timed repeat"); !r) {
          return r.error();
        }
      }
      return ElapsedSinceStart("a timed repeat");
    }

    // Runs the module `n` times between two events on the stream: the elapsed ms.
    Result<double> TimeRuns(int64_t n, const char* what) {
      const CudaDriver& d = e_.d_;
      if (auto r = e_.Check(d.EventRecord(e_.start_, e_.stream_), "cuEventRecord"); !r) return r.error();
      if (auto r = Launch(n, what); !r) return r.error();
      return ElapsedSinceStart(what);
    }

    // Records the stop event and waits for it: ms since the start event.
    Result<double> ElapsedSinceStart(const char* what) {
      const CudaDriver& d = e_.d_;
      if (auto r = e_.Check(d.EventRecord(e_.stop_, e_.stream_), "cuEventRecord"); !r) return r.error();
      // Faults of the kernels surface here.
      if (auto r = e_.Check(d.EventSynchronize(e_.stop_), fmt::format("cuEventSynchronize after {}", what)); !r) {
        return r.error();
      }
      float ms = 0;
      if (auto r = e_.Check(d.EventElapsedTime(&ms, e_.start_, e_.stop_), "cuEventElapsedTime"); !r) return r.error();
      return static_cast<double>(ms);
    }

    Executor& e_;
    const CudaModuleRun& m_;
    cu::Module module_ = nullptr;
    std::vector<cu::Function> functions_;
    std::vector<std::pair<cu::DevicePtr, int64_t>> workspaces_;  // this module's, from the pool
    std::vector<cu::DevicePtr> args_;
    std::vector<void*> arg_ptrs_;
  };

  Result<void> Check(cu::Result r, const std::string& what) const {
    if (r == cu::kSuccess) return {};
    return MakeError(fmt::format("{} ({})", d_.ErrorText(r), what));
  }

  // After an error: a sticky error (a fault) leaves the context unusable, and every call returns it.
  bool ContextBroken() const { return d_.CtxSynchronize() != cu::kSuccess; }

  // Copies the pristine inputs over the ones candidates get, on the stream (ahead of their runs): a
  // copy within the GPU, ~100x faster than from the host. The pristine copies themselves are copied
  // from the host first when the last candidate failed (it may have written anywhere).
  Result<void> RestoreInputs() {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const size_t bytes = host_inputs_[i].bytes();
      if (pristine_stale_) {
        // stream_ is a blocking stream: its copy below waits for this one on the legacy stream.
        auto r = Check(d_.MemcpyHtoD(pristine_[i], host_inputs_[i].data(), bytes), "cuMemcpyHtoD of an input");
        if (!r) return r;
      }
      auto r = Check(d_.MemcpyDtoDAsync(inputs_[i], pristine_[i], bytes, stream_), "cuMemcpyDtoDAsync of an input");
      if (!r) return r;
    }
    pristine_stale_ = false;
    return {};
  }

  void FreeWorkload() {
    workspaces_.Clear();
    for (cu::DevicePtr p : inputs_) d_.MemFree(p);
    inputs_.clear();
    for (cu::DevicePtr p : pristine_) d_.MemFree(p);
    pristine_.clear();
    if (host_output_) d_.MemFreeHost(host_output_);
    host_output_ = nullptr;
    pageable_output_.clear();
    widened_output_.clear();
    host_inputs_.clear();
    if (output_) d_.MemFree(output_);
    output_ = 0;
    outputs_ = {};
    reference_.clear();
    workload_ready_ = false;
  }

  const CudaDriver& d_;
  const MeasureConfig& cfg_;
  CudaDeviceInfo info_;
  cu::Device dev_ = 0;
  cu::Context ctx_ = nullptr;
  cu::Stream stream_ = nullptr;
  cu::Event start_ = nullptr, stop_ = nullptr;
  cu::DevicePtr flush_ = 0;
  int64_t flush_bytes_ = 0;
  // The outputs' buffer, in whole 32-bit words.
  size_t OutputBytes() const {
    return (static_cast<size_t>(outputs_.buffer_elements) * tir::BytesOf(output_type_) + 3) / 4 * 4;
  }
  void* HostOutput() { return host_output_ ? host_output_ : pageable_output_.data(); }
  // The outputs last copied to HostOutput(), as float32 values one after the other (OutputLayout).
  const float* OutputValues() {
    float* values = static_cast<float*>(HostOutput());
    if (output_type_ != tir::DType::kFloat32) {
      WidenToFloat(HostOutput(), outputs_.buffer_elements, output_type_, widened_output_.data());
      values = widened_output_.data();
    }
    outputs_.Compact(values);
    return values;
  }

  // The workload.
  bool workload_ready_ = false;
  std::vector<KernelTensor> host_inputs_;  // in their types, as kernels read them
  std::vector<cu::DevicePtr> inputs_;
  std::vector<cu::DevicePtr> pristine_;  // the inputs as made, on the GPU
  bool pristine_stale_ = true;           // copy them from the host before the next restore
  cu::DevicePtr output_ = 0;
  tir::DType output_type_ = tir::DType::kFloat32;
  double extra_rtol_ = 0;
  void* host_output_ = nullptr;                // page-locked copy of the output, in its type
  std::vector<unsigned char> pageable_output_;  // where page-locked memory was refused
  std::vector<float> widened_output_;          // a 16-bit output as float32
  OutputLayout outputs_;
  std::vector<float> reference_;
  ReferenceRounding reference_rounding_ = ReferenceRounding::kFloat32;
  double reference_scale_ = 1;
  WorkspacePool workspaces_{d_};
};

[[noreturn]] void ExecutorMain(int fd, const MeasureConfig& config, pid_t parent) {
  ResetSignalsAndCoreLimit();
  if (getppid() != parent) _exit(1);
  CloseDescriptorsExcept(fd);
  // Ends the executor when the parent dies, also while a kernel hangs (PR_SET_PDEATHSIG would follow
  // the forking thread rather than the process, and the tuner may run from short-lived threads).
  std::thread([parent] {
    while (getppid() == parent) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    _exit(0);
  }).detach();

  // Not LoadCudaDriver(): its once-guard may have been held by another thread of the parent at the fork.
  const Result<CudaDriver> driver = LoadCudaDriverFrom(kCudaDriverLibrary);
  if (!driver) {
    SendFrame(fd, Dump({{"ok", false}, {"error", driver.error().message}}), "");
    _exit(0);
  }
  Executor executor(*driver, config);
  auto device = executor.Open();
  if (!device) {
    SendFrame(fd, Dump({{"ok", false}, {"error", device.error().message}}), "");
    _exit(0);
  }
  if (!SendFrame(fd, Dump({{"ok", true}, {"device", json::parse(CudaDeviceInfoToJson(*device))}}), "")) _exit(0);

  // AUTOTUNE_EXECUTOR_TRACE=FILE: a line per candidate with the milliseconds of each phase of its
  // run, for profiling the run stage's fixed cost per candidate.
  const char* trace_path = std::getenv("AUTOTUNE_EXECUTOR_TRACE");
  std::ofstream trace;
  if (trace_path && *trace_path) trace.open(trace_path, std::ios::app);
  json req;
  std::string blob;
  while (ReadFrameBlocking(fd, req, blob)) {
    const auto received = Clock::now();
    const std::string op = req.value("op", "");
    json reply;
    if (op == "workload") {
      reply = executor.SetWorkload(req, blob);
    } else if (op == "run") {
      PhaseClock phases;
      reply = executor.Measure(req, phases);
      if (trace.is_open()) {
        // total - the phases: unloading the module, and the answer.
        trace << phases.Describe() << fmt::format(" total={:.3f}\n", std::chrono::duration<double, std::milli>(Clock::now() - received).count())
              << std::flush;
      }
    } else {
      _exit(0);  // "exit", or a request we do not know
    }
    if (!SendFrame(fd, Dump(reply), "")) _exit(0);
    if (reply.value("fatal", false)) _exit(0);  // the context is unusable: the parent starts a fresh one
  }
  _exit(0);
}

}  // namespace

// ==== the parent side =============================================================================

struct CudaExecutor::Frame {
  json j;
  std::string blob;
};

CudaModuleRun CudaModuleRun::FromBuild(const BuildResult& b) {
  return CudaModuleRun{b.artifact, b.kernels, b.workspace_bytes};
}

CudaExecutor::CudaExecutor(MeasureConfig config) : config_(std::move(config)) {}

CudaExecutor::~CudaExecutor() { Stop(); }

std::string CudaExecutor::Reap(double grace_s) {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  std::string how = "killed";
  if (pid_ > 0) {
    if (auto status = ReapBy(pid_, pid_, DeadlineAfter(Clock::now(), grace_s))) how = DescribeWaitStatus(*status);
  }
  pid_ = -1;
  workload_sent_ = false;
  return how;
}

void CudaExecutor::Kill() {
  if (pid_ > 0) kill(pid_, SIGKILL);
  Reap(kExecutorExitGraceS);
}

void CudaExecutor::Stop() {
  if (pid_ <= 0) return;
  SendFrame(fd_, Dump({{"op", "exit"}}), "");
  Reap(kExecutorExitGraceS);
}

CudaExecutor::Wait CudaExecutor::Request(const std::string& text, const std::string& blob, double timeout_s,
                                         Frame& reply) {
  const auto deadline = DeadlineAfter(Clock::now(), timeout_s);
  if (!text.empty() && !SendFrame(fd_, text, blob)) return Wait::kClosed;
  std::string bytes;
  FrameHeader h;
  char buf[1 << 16];
  for (;;) {
    if (bytes.size() >= sizeof h) {
      std::memcpy(&h, bytes.data(), sizeof h);
      if (h.magic != kFrameMagic) return Wait::kClosed;  // garbled: treat as dead
      if (bytes.size() >= sizeof h + h.json_bytes + h.blob_bytes) break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Wait::kTimeout;
    pollfd p{fd_, POLLIN, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<long long>(left, 200)));
    if (n < 0 && errno != EINTR) return Wait::kClosed;
    if (n <= 0) {
      // A dead executor whose socket end is still held open elsewhere (a child forked meanwhile by
      // another thread) sends no end-of-file: look at the process itself.
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        close(fd_);
        fd_ = -1;
        pid_ = -1;
        workload_sent_ = false;
        reply.j = {{"ended", DescribeWaitStatus(status)}};
        return Wait::kClosed;
      }
      continue;
    }
    const ssize_t got = read(fd_, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Wait::kClosed;
    bytes.append(buf, static_cast<size_t>(got));
  }
  reply.j = json::parse(bytes.substr(sizeof h, h.json_bytes), nullptr, /*allow_exceptions=*/false);
  reply.blob = bytes.substr(sizeof h + h.json_bytes, h.blob_bytes);
  return reply.j.is_discarded() ? Wait::kClosed : Wait::kOk;
}

Result<CudaDeviceInfo> CudaExecutor::Start() {
  if (pid_ > 0) return *device_;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return MakeError(std::string("socketpair: ") + std::strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return MakeError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);  // a Ctrl-C at the terminal is the parent's to handle (it finishes the batch)
    close(sv[0]);
    ExecutorMain(sv[1], config_, parent);
  }
  close(sv[1]);
  pid_ = pid;
  fd_ = sv[0];
  // Never block for good on a peer that stopped reading.
  timeval send_limit{60, 0};
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &send_limit, sizeof send_limit);
  ++starts_;
  workload_sent_ = false;

  Frame ready;
  switch (Request("", "", kStartTimeoutS, ready)) {
    case Wait::kTimeout:
      Kill();
      return MakeError(fmt::format("the CUDA executor did not start within {:g} s", kStartTimeoutS));
    case Wait::kClosed: {
      const std::string how = ready.j.is_object() && ready.j.contains("ended") ? ready.j["ended"].get<std::string>()
                                                                              : Reap(kExecutorExitGraceS);
      return MakeError("the CUDA executor died while starting: " + how);
    }
    case Wait::kOk:
      break;
  }
  if (!ready.j.value("ok", false)) {
    Reap(kExecutorExitGraceS);
    return MakeError(ready.j.value("error", std::string("the CUDA executor could not start")));
  }
  auto info = CudaDeviceInfoFromJson(ready.j.contains("device") ? ready.j["device"].dump() : "");
  if (!info) {
    Kill();
    return info.error();
  }
  device_ = *info;
  return *device_;
}

void CudaExecutor::SetWorkload(CudaWorkloadSpec spec) {
  if (workload_ && workload_->key == spec.key) return;
  workload_ = std::move(spec);
  workload_sent_ = false;
  workload_error_.reset();
}

Result<void> CudaExecutor::SendWorkload() {
  const CudaWorkloadSpec& w = *workload_;
  json req = {{"op", "workload"},
              {"inputs", w.input_elements},
              {"input_types", ElementTypeNames(w.input_types)},
              {"outputs", w.output_elements},
              {"output_type", tir::DTypeName(w.output_type)},
              {"extra_rtol", w.extra_rtol},
              {"seed", w.seed},
              {"reference", w.reference ? ModuleToJson(*w.reference) : json(nullptr)}};
  std::string blob;
  if (!w.reference) {
    if (!w.host_data) return MakeError("the workload has no reference");
    const AlignedFloats& ref = w.host_data->reference;
    blob.assign(reinterpret_cast<const char*>(ref.data()), ref.size() * sizeof(float));
  }
  const double timeout = WorkloadTimeout(config_);
  Frame reply;
  switch (Request(Dump(req), blob, timeout, reply)) {
    case Wait::kTimeout:
      Kill();
      return MakeError(fmt::format("setting up the workload on the GPU (inputs, reference kernel) exceeded {:g} s", timeout));
    case Wait::kClosed: {
      const std::string how = reply.j.is_object() && reply.j.contains("ended") ? reply.j["ended"].get<std::string>()
                                                                              : Reap(kExecutorExitGraceS);
      return MakeError("the CUDA executor died setting up the workload: " + how);
    }
    case Wait::kOk:
      break;
  }
  if (!reply.j.value("ok", false)) {
    if (reply.j.value("fatal", false)) Reap(kExecutorExitGraceS);
    return MakeError(reply.j.value("error", std::string("setting up the workload failed")));
  }
  workload_sent_ = true;
  return {};
}

CudaRunOutcome CudaExecutor::Run(const CudaModuleRun& module, double stop_above_ms) {
  CudaRunOutcome out;
  auto fail = [&](ErrorKind kind, std::string msg) {
    out.kind = kind;
    out.message = std::move(msg);
    return out;
  };
  if (!workload_) return fail(ErrorKind::kRunError, "no workload set");
  if (workload_error_) return fail(ErrorKind::kRunError, *workload_error_);
  auto device = Start();
  if (!device) return fail(ErrorKind::kRunError, device.error().message);
  if (!workload_sent_) {
    if (auto r = SendWorkload(); !r) {
      workload_error_ = r.error().message;
      return fail(ErrorKind::kRunError, *workload_error_);
    }
  }

  Frame reply;
  const std::string request =
      Dump({{"op", "run"}, {"module", ModuleToJson(module)}, {"stop_above_ms", stop_above_ms}});
  switch (Request(request, "", config_.run_timeout_s, reply)) {
    case Wait::kTimeout:
      Kill();
      return fail(ErrorKind::kRunTimeout, fmt::format("the run exceeded {:g} s", config_.run_timeout_s));
    case Wait::kClosed: {
      const std::string how = reply.j.is_object() && reply.j.contains("ended") ? reply.j["ended"].get<std::string>()
                                                                              : Reap(kExecutorExitGraceS);
      return fail(ErrorKind::kRunError, "the CUDA executor died: " + how);
    }
    case Wait::kOk:
      break;
  }
  out.timed_seconds = reply.j.value("timed_s", 0.0);
  const auto kind = ParseErrorKind(reply.j.value("kind", std::string("?")));
  const bool sane = kind && (*kind == ErrorKind::kNone || *kind == ErrorKind::kRunError || *kind == ErrorKind::kWrongAnswer);
  if (reply.j.value("fatal", false)) Reap(kExecutorExitGraceS);
  if (!sane) {
    Kill();
    return fail(ErrorKind::kRunError, "the CUDA executor sent a malformed result");
  }
  out.kind = *kind;
  out.message = reply.j.value("message", std::string());
  out.max_rel_error = reply.j.contains("max_rel_error") ? FromFinite(reply.j["max_rel_error"]) : 0.0;
  if (out.kind == ErrorKind::kNone && reply.j.contains("latencies") && reply.j["latencies"].is_array()) {
    out.latencies_ms = reply.j["latencies"].get<std::vector<double>>();
  }
  return out;
}

}  // namespace autotune::measure
