#include "tests/db/lookup/lookup_fixture.h"

#include "db/database.h"
#include "search/default_schedule.h"
#include "tir/analysis/gpu_validity.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/version.h"

namespace autotune::db::testing {

TuningRecord MakeRecord(const tir::Schedule& schedule, const TargetInfo& target, double ms) {
  TuningRecord r;
  r.workload = WorkloadInfo::From(schedule.workload());
  r.target = target;
  r.trace_json = schedule.trace().ToJson().dump();
  r.trace_hash = HashTraceJson(r.trace_json);
  r.trace_format_version = tir::kTraceFormatVersion;
  r.latencies_ms = {ms * 1.01, ms, ms * 0.995};
  r.median_ms = ms;
  r.gflops = schedule.workload().flops / (ms * 1e6);
  r.correct = true;
  r.max_rel_error = 1e-6;
  r.measured_at = NowIso8601();
  r.autotune_version = kVersion;
  return r;
}

void SetMedian(TuningRecord& r, double ms) {
  r.latencies_ms = {ms * 0.99, ms, ms * 1.25};
  r.median_ms = ms;
  r.gflops = r.workload.flops / (ms * 1e6);
}

namespace {

// Sampled schedules that lower (and, for cuda, pass the GPU validity check), from seed 1 on.
Result<std::vector<tir::Schedule>> ValidSchedules(const tir::Workload& w, tir::TargetKind kind, int count) {
  std::vector<tir::Schedule> out;
  auto d = search::DefaultSchedule(w, kind);
  if (!d) return d.error();
  out.push_back(std::move(*d));
  for (uint64_t seed = 1; static_cast<int>(out.size()) < count && seed < 5000; ++seed) {
    auto s = search::RandomSchedule(w, kind, seed);
    if (!s) continue;
    auto f = tir::Lower(s->state());
    if (!f || (kind == tir::TargetKind::kCuda && !tir::CheckGpuValidity(*f))) continue;
    out.push_back(std::move(*s));
  }
  if (static_cast<int>(out.size()) < count) return MakeError("not enough valid sampled schedules");
  return out;
}

}  // namespace

Result<void> WriteLookupFixture(const std::string& path) {
  auto db = TuningDatabase::Open(path, OpenMode::kReadWrite);
  if (!db) return db.error();
  std::vector<TuningRecord> batch;
  struct Entry {
    TargetInfo target;
    const char* op;
    const char* shape;
    std::vector<double> ms;  // one record per latency, schedules in order (default first)
    const char* dtype = "float32";
  };
  const Entry entries[] = {
      {kTestCpu, "gemm", "M=64,N=64,K=64", {0.3, 0.2, 0.25}},
      {kTestCpu, "gemm", "M=64,N=64,K=64", {0.1}, "float16"},  // faster, but never a float32 answer
      {kTestCpu, "gemm", "M=64,N=64,K=64", {0.05}, "tf32"},    // likewise
      {kTestCpu, "gemm", "M=128,N=128,K=128", {1.5, 1.2}},
      {kTestCpu, "gemm", "M=256,N=256,K=64", {2.0}},
      {kTestCpu, "conv2d", "N=1,C=16,H=14,W=14,K=32,R=3,S=3,pad=1", {0.9}},
      {kTestCpu, "add_rms_norm", "M=4,N=48", {0.01}},  // two outputs: the sum, then Y
      {kTestH200, "gemm", "M=256,N=256,K=256", {0.05, 0.02}},
      {kTestH200, "gemm", "M=1024,N=1024,K=1024", {0.4}},
      {kTestH200, "conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", {0.08}},
      {kTestA100, "gemm", "M=256,N=256,K=256", {0.03}},
  };
  for (const Entry& e : entries) {
    auto w = tir::MakeWorkload(e.op, e.shape, "", e.dtype);
    if (!w) return w.error();
    const auto kind = e.target.kind == "cuda" ? tir::TargetKind::kCuda : tir::TargetKind::kCpu;
    auto schedules = ValidSchedules(*w, kind, static_cast<int>(e.ms.size()) + 1);
    if (!schedules) return schedules.error();
    for (size_t i = 0; i < e.ms.size(); ++i) batch.push_back(MakeRecord((*schedules)[i], e.target, e.ms[i]));
    if (e.target.kind == "cpu" && e.ms.size() == 3) {
      // A wrong answer is never the best, however fast it ran.
      TuningRecord wrong = MakeRecord(schedules->back(), e.target, 0.01);
      wrong.correct = false;
      wrong.error_kind = "WRONG_ANSWER";
      wrong.error_message = "max relative error 0.5";
      batch.push_back(wrong);
    }
  }
  auto committed = (*db)->CommitBatch(batch);
  if (!committed) return committed.error();
  return {};
}

}  // namespace autotune::db::testing
