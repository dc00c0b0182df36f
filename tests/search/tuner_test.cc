// The tuning loop without a GPU and without timing: a fake builder (C codegen, no compiler) and a
// scripted fake runner whose latency is a hash of the generated source, with some candidates
// reported as BUILD_ERROR, WRONG_ANSWER or a "correct: false" result faster than anything valid.
// Resume, several tasks under the scheduler, stopping, determinism and the choice of the best, with
// rounds one at a time and overlapped (the next round built while this one is measured).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <utility>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "db/database.h"
#include "costmodel/cost_model.h"
#include "measure/compile_slots.h"
#include "search/default_schedule.h"
#include "search/measure_record.h"
#include "search/tuner.h"
#include "tir/schedule/replay_on_shape.h"
#include "tir/codegen/codegen_c.h"
#include "tir/ops/operator.h"
#include "tests/temp_path.h"

namespace autotune::search {
namespace {

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// Generates C (the real codegen, so the source identifies the schedule) without compiling it.
class FakeBuilder : public measure::Builder {
 public:
  std::vector<measure::BuildResult> Build(const std::vector<measure::BuildInput>& inputs,
                                         const OnBuilt& on_built = {}) override {
    {
      std::lock_guard lock(orders_mu);
      orders.push_back(measure::BuildOrder::Current());
    }
    if (on_build) on_build();
    std::vector<measure::BuildResult> out;
    for (const auto& in : inputs) {
      if (before_input) before_input(out, inputs.size());
      measure::BuildResult b;
      auto src = tir::CodegenC(in.func);
      if (!src) {
        b.error_kind = measure::ErrorKind::kBuildError;
        b.error_message = src.error().message;
      } else {
        b.source = src->code;
        b.entry = src->entry;
        b.artifact = "fake.so";
        std::lock_guard lock(orders_mu);
        b.cached = !built_sources.insert(b.source).second;
        b.build_cpu_seconds = b.cached ? 0 : 0.25;
      }
      out.push_back(std::move(b));
      if (on_built) on_built(out.size() - 1, out.back());
    }
    return out;
  }
  std::function<void()> on_build;  // before each Build
  // Before building each input, with the batch's results so far and its size.
  std::function<void(const std::vector<measure::BuildResult>& built, size_t count)> before_input;
  std::mutex orders_mu;
  std::vector<std::optional<uint64_t>> orders;  // the BuildOrder of each Build call's thread
  std::set<std::string> built_sources;          // a source built again counts as a cache hit
};

// One measurement the fake runner made.
struct FakeCall {
  uint64_t source_hash = 0;
  measure::MeasureResult result;
};

// Scripted results from the source's hash: 1 in 6 BUILD_ERROR, 1 in 6 WRONG_ANSWER (with a tiny
// latency), 1 in 12 "no error but not correct" (tiny latency too); the rest valid, 1..11 ms.
class FakeRunner : public measure::Runner {
 public:
  std::vector<measure::MeasureResult> Run(const tir::Workload& workload,
                                          const std::vector<measure::BuildResult>& builds) override {
    ++runs;
    if (during_run) during_run(runs);
    std::vector<measure::MeasureResult> out;
    for (const auto& b : builds) {
      if (on_candidate) on_candidate(b);
      measure::MeasureResult r;
      const uint64_t h = Fnv1a(workload.Key() + b.source);
      if (!b.ok()) {
        r = measure::MeasureResult::Error(b.error_kind, b.error_message);
      } else if (h % 6 == 1) {
        r = measure::MeasureResult::Error(measure::ErrorKind::kBuildError, "scripted build error");
      } else if (h % 6 == 2) {
        r = measure::MeasureResult::Error(measure::ErrorKind::kWrongAnswer, "scripted wrong answer");
        r.latencies_ms = {0.001};
        r.median_ms = 0.001;
        r.max_rel_error = 0.5;
      } else if (h % 12 == 3) {
        r.latencies_ms = {0.0005};
        r.median_ms = 0.0005;
        r.correct = false;  // no error kind, but the check failed: not valid either
      } else {
        const double ms = 1.0 + static_cast<double>(h % 1000) / 100.0;
        r.latencies_ms = {ms, ms, ms};
        r.median_ms = ms;
        r.correct = true;
        r.max_rel_error = 1e-7;
      }
      const int nth = ++times_measured[h];
      if (nth > 1) {
        if (screening) ++screened_again;
        if (again) r = again(r, nth);
      }
      r.build_cpu_seconds = b.build_cpu_seconds;
      r.timed_seconds = r.ok() ? 0.01 : 0;
      calls.push_back({h, r});
      out.push_back(r);
    }
    if (on_run) on_run(runs);
    return out;
  }

  int runs = 0;
  std::vector<FakeCall> calls;
  std::function<void(int)> on_run;      // after each Run, with the number of runs so far
  std::function<void(int)> during_run;  // at the start of each Run (the runs so far, this one counted)
  std::function<void(const measure::BuildResult&)> on_candidate;  // before measuring each candidate
  // A program measured again (the end of a job): its scripted result and the how-manieth measurement
  // this is, to the result returned; none: the same as the first.
  std::function<measure::MeasureResult(const measure::MeasureResult&, int)> again;
  std::map<uint64_t, int> times_measured;
  void SetScreening(bool on) override { screening = on; }
  bool screening = true;
  int screened_again = 0;  // programs measured again while screening was on
};

db::TargetInfo TestTarget() { return {"cpu", "x86_64", "Test CPU", "", "cc (test) 12.2"}; }

std::string TempDb(const std::string& name) {
  const std::string path = autotune::testing::TestTempPath("autotune_tuner", name + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

std::unique_ptr<db::TuningDatabase> OpenDb(const std::string& path) {
  auto db = db::TuningDatabase::Open(path);
  EXPECT_TRUE(db) << (db ? "" : db.error().message);
  return std::move(db).value();
}

TuneConfig Config(uint64_t seed, int trials, int batch_size) {
  TuneConfig c;
  c.target = tir::TargetKind::kCpu;
  c.target_info = TestTarget();
  c.trials = trials;
  c.batch_size = batch_size;
  c.seed = seed;
  c.evolution.population = 24;
  c.evolution.generations = 2;
  c.remeasure_best = 0;  // the tests of the end's re-measurement turn it on
  return c;
}

TuneTaskSpec Task(const std::string& op, const std::string& shape, const std::string& epilogue = "", double weight = 1) {
  TuneTaskSpec t;
  t.op = op;
  t.shape = shape;
  t.epilogue = epilogue;
  t.weight = weight;
  return t;
}

const TuneTaskSpec kGemm = Task("gemm", "M=64,N=48,K=32");

struct Job {
  FakeBuilder builder;
  FakeRunner runner;
  std::vector<TaskReport> reports;
  int batches = 0;
  costmodel::CostModel* model = nullptr;  // nullptr: a random model seeded by the job
};

// Runs a job on the database at `path`; `stop` may be set by the runner's or the batch callback.
void RunJob(Job& job, const std::string& path, const TuneConfig& config, const std::vector<TuneTaskSpec>& tasks,
            std::atomic<bool>& stop, const std::function<void(const TuneProgress&)>& on_batch = {}) {
  auto db = OpenDb(path);
  auto random_model = costmodel::MakeRandomCostModel(config.seed);
  Tuner tuner(config, job.builder, job.runner, *db, job.model ? *job.model : *random_model);
  auto r = tuner.Run(tasks, stop, [&](const TuneProgress& p) {
    ++job.batches;
    EXPECT_EQ(p.trials_total, config.trials);
    EXPECT_LE(p.trials_done, config.trials);
    ASSERT_NE(p.reports, nullptr);
    if (on_batch) on_batch(p);
  });
  ASSERT_TRUE(r) << r.error().message;
  job.reports = std::move(r).value();
}

void RunJob(Job& job, const std::string& path, const TuneConfig& config, const std::vector<TuneTaskSpec>& tasks) {
  std::atomic<bool> stop{false};
  RunJob(job, path, config, tasks, stop);
}

// Every record of the database, in insertion (= measurement) order.
std::vector<db::TuningRecord> Records(const std::string& path) {
  auto db = OpenDb(path);
  std::vector<db::TuningRecord> out;
  auto r = db->ForEachRecord([&](const db::TuningRecord& rec) {
    out.push_back(rec);
    return true;
  });
  EXPECT_TRUE(r);
  return out;
}

std::vector<std::string> Hashes(const std::vector<db::TuningRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) out.push_back(r.trace_hash);
  return out;
}

int TotalTrials(const std::vector<TaskReport>& reports) {
  int n = 0;
  for (const auto& r : reports) n += r.trials;
  return n;
}

std::string DefaultTraceJson(const TuneTaskSpec& t) {
  auto w = tir::MakeWorkload(t.op, t.shape, t.epilogue);
  EXPECT_TRUE(w);
  auto sch = DefaultSchedule(*w, tir::TargetKind::kCpu);
  EXPECT_TRUE(sch);
  return sch->trace().ToJson().dump();
}

TEST(Tuner, MeasuresTheBudgetStoresEveryResultAndStartsWithTheDefault) {
  const std::string path = TempDb("budget");
  Job job;
  RunJob(job, path, Config(7, 20, 6), {kGemm});
  ASSERT_EQ(job.reports.size(), 1u);
  const TaskReport& r = job.reports[0];
  EXPECT_EQ(r.trials, 20);
  EXPECT_EQ(job.runner.calls.size(), 20u);
  EXPECT_EQ(job.runner.runs, 4);  // 6 + 6 + 6 + 2
  EXPECT_EQ(job.batches, 4);
  ASSERT_EQ(r.curve.size(), 4u);
  for (size_t i = 1; i < r.curve.size(); ++i) {
    if (r.curve[i - 1] > 0) {  // 0 until something valid was measured
      EXPECT_GT(r.curve[i], 0);
      EXPECT_LE(r.curve[i], r.curve[i - 1]) << "the best so far never gets slower";
    }
  }
  EXPECT_EQ(r.workload, "gemm[M=64,N=48,K=32]");

  const auto records = Records(path);
  ASSERT_EQ(records.size(), 20u);
  EXPECT_EQ(records[0].trace_json, DefaultTraceJson(kGemm)) << "the first measurement is the default schedule";
  const auto hashes = Hashes(records);
  EXPECT_EQ(std::set<std::string>(hashes.begin(), hashes.end()).size(), 20u);
  int failed = 0;
  for (const auto& rec : records) failed += !rec.valid();
  EXPECT_EQ(r.failed, failed);
  EXPECT_GT(failed, 0) << "the script fails some candidates";
  // Every trial measured another program: no build came from the cache, and the report adds up the
  // compilers' CPU time.
  EXPECT_EQ(r.cached_builds, 0);
  std::set<uint64_t> programs;
  for (const auto& c : job.runner.calls) programs.insert(c.source_hash);
  EXPECT_EQ(programs.size(), job.runner.calls.size());
  double cpu = 0;
  for (const auto& c : job.runner.calls) cpu += c.result.build_cpu_seconds;
  EXPECT_DOUBLE_EQ(r.build_cpu_seconds, cpu);
  EXPECT_GT(r.build_cpu_seconds, 0);
  double timed = 0;
  for (const auto& c : job.runner.calls) timed += c.result.timed_seconds;
  EXPECT_DOUBLE_EQ(r.timed_seconds, timed);
  EXPECT_GT(r.timed_seconds, 0);
}

TEST(Tuner, FailedCandidatesNeverBecomeTheBest) {
  const std::string path = TempDb("best");
  Job job;
  RunJob(job, path, Config(3, 30, 10), {kGemm});
  double best_valid = 0;
  bool faster_invalid = false;
  for (const auto& c : job.runner.calls) {
    if (c.result.ok() && c.result.correct) {
      if (best_valid == 0 || c.result.median_ms < best_valid) best_valid = c.result.median_ms;
    } else if (c.result.median_ms > 0) {
      faster_invalid = true;
    }
  }
  ASSERT_GT(best_valid, 0);
  ASSERT_TRUE(faster_invalid) << "the script must offer a faster invalid result";
  const TaskReport& r = job.reports[0];
  EXPECT_EQ(r.best_latency_ms, best_valid);
  EXPECT_EQ(r.curve.back(), best_valid);
  auto w = tir::MakeWorkload(kGemm.op, kGemm.shape);
  auto db = OpenDb(path);
  auto best = db->Best(w->Key(), db::TargetQuery{"cpu", "x86_64"}, 1);
  ASSERT_TRUE(best);
  ASSERT_EQ(best->size(), 1u);
  EXPECT_TRUE((*best)[0].valid());
  EXPECT_EQ((*best)[0].trace_json, r.best_trace_json);
  EXPECT_NEAR(r.best_gflops, w->flops / (best_valid * 1e6), 1e-9);
}

// The valid records of kGemm in the database, fastest first.
std::vector<db::TuningRecord> BestRecords(const std::string& path) {
  auto w = tir::MakeWorkload(kGemm.op, kGemm.shape);
  auto db = OpenDb(path);
  auto best = db->Best(w->Key(), db::TargetQuery{"cpu", "x86_64"}, 0);
  EXPECT_TRUE(best);
  return best ? *best : std::vector<db::TuningRecord>{};
}

TEST(Tuner, TheEndOfAJobMeasuresTheFastestFewAgainAndALuckyFigureDoesNotStay) {
  const std::string path = TempDb("remeasure");
  Job job;
  // Measured again, every program is 10x slower than its first figure, and the first one measured
  // again (the fastest) is a wrong answer: each pass's contenders drop out, and the next pass takes
  // the next fastest, three passes in all.
  job.runner.again = [&, first = true](const measure::MeasureResult& r, int) mutable {
    measure::MeasureResult out = r;
    if (std::exchange(first, false)) return measure::MeasureResult::Error(measure::ErrorKind::kWrongAnswer, "flaky");
    for (double& ms : out.latencies_ms) ms *= 10;
    out.median_ms *= 10;
    return out;
  };
  TuneConfig config = Config(7, 30, 10);
  config.remeasure_best = 3;
  const auto before = [&] {
    Job plain;
    RunJob(plain, TempDb("remeasure_plain"), Config(7, 30, 10), {kGemm});
    return plain.reports[0];
  }();
  RunJob(job, path, config, {kGemm});
  const TaskReport& r = job.reports[0];
  EXPECT_EQ(r.trials, 30) << "re-measurements are not trials";
  ASSERT_EQ(r.remeasured.size(), 9u);
  ASSERT_EQ(job.runner.calls.size(), 39u);
  EXPECT_EQ(r.remeasured[0].first_ms, before.best_latency_ms);
  EXPECT_EQ(r.remeasured[0].again_ms, 0) << "the failed re-measurement";
  for (size_t k = 1; k < r.remeasured.size(); ++k) EXPECT_DOUBLE_EQ(r.remeasured[k].again_ms, 10 * r.remeasured[k].first_ms);

  const auto records = Records(path);
  EXPECT_EQ(records.size(), 30u) << "a re-measurement replaces its record's figures";
  const auto best = BestRecords(path);
  ASSERT_FALSE(best.empty());
  EXPECT_EQ(r.best_latency_ms, best[0].median_ms) << "the best is the database's after the re-measurements";
  EXPECT_EQ(r.best_trace_json, best[0].trace_json);
  EXPECT_GT(r.best_latency_ms, before.best_latency_ms);
  for (const auto& rec : records) {
    const auto info = nlohmann::json::parse(rec.info_json);
    if (rec.trace_hash != r.remeasured[0].trace_hash) continue;
    EXPECT_FALSE(rec.valid()) << "a wrong answer when measured again makes the record invalid";
    EXPECT_EQ(info["first_measurement"]["median_ms"].get<double>(), before.best_latency_ms) << "the first figure is kept";
  }
}

TEST(Tuner, FiguresThatHoldTakeOnePassOfReMeasurements) {
  const std::string path = TempDb("remeasure_same");
  Job job;
  TuneConfig config = Config(7, 30, 10);
  config.remeasure_best = 3;
  RunJob(job, path, config, {kGemm});
  const TaskReport& r = job.reports[0];
  ASSERT_EQ(r.remeasured.size(), 3u);
  EXPECT_EQ(job.runner.calls.size(), 33u);
  for (const auto& m : r.remeasured) EXPECT_EQ(m.again_ms, m.first_ms);
  EXPECT_EQ(r.best_latency_ms, r.remeasured[0].again_ms);
  EXPECT_EQ(Records(path).size(), 30u);
  EXPECT_EQ(job.runner.screened_again, 0) << "re-measurements get every repeat";
  EXPECT_TRUE(job.runner.screening) << "and screening is on again after them";
}

TEST(Tuner, ResumingNeverMeasuresATraceAgain) {
  const std::string path = TempDb("resume");
  Job first;
  RunJob(first, path, Config(5, 16, 8), {kGemm});
  ASSERT_EQ(first.reports[0].trials, 16);
  const auto after_first = Records(path);
  ASSERT_EQ(after_first.size(), 16u);

  // The same job again: only new traces, and the best so far carries over.
  Job second;
  RunJob(second, path, Config(5, 16, 8), {kGemm});
  EXPECT_EQ(second.reports[0].trials, 16);
  EXPECT_EQ(second.runner.calls.size(), 16u);
  const auto after_second = Records(path);
  ASSERT_EQ(after_second.size(), 32u) << "every measurement of the second job is a new record";
  std::set<std::string> first_hashes;
  for (const auto& r : after_first) first_hashes.insert(r.trace_hash);
  for (size_t i = 16; i < after_second.size(); ++i) {
    EXPECT_EQ(first_hashes.count(after_second[i].trace_hash), 0u) << "measured again: " << after_second[i].trace_json;
  }
  EXPECT_NE(after_second[16].trace_json, DefaultTraceJson(kGemm)) << "the default was measured by the first job";
  ASSERT_GT(first.reports[0].best_latency_ms, 0);
  EXPECT_LE(second.reports[0].best_latency_ms, first.reports[0].best_latency_ms);
  ASSERT_FALSE(second.reports[0].curve.empty());
  EXPECT_LE(second.reports[0].curve.front(), first.reports[0].best_latency_ms) << "the curve starts from the stored best";
}

TEST(Tuner, SharesTheBudgetAmongTasks) {
  const std::string path = TempDb("tasks");
  const std::vector<TuneTaskSpec> tasks = {kGemm, Task("batch_matmul", "B=2,M=16,N=32,K=16", "", 2),
                                           Task("conv2d", "N=1,C=8,H=10,W=10,K=16,R=3,S=3,pad=1", "bias,relu", 3)};
  Job job;
  RunJob(job, path, Config(11, 40, 4), tasks);
  ASSERT_EQ(job.reports.size(), 3u);
  EXPECT_EQ(TotalTrials(job.reports), 40);
  const auto records = Records(path);
  EXPECT_EQ(records.size(), 40u);
  std::map<std::string, int> per_workload;
  for (const auto& r : records) ++per_workload[r.workload.CanonicalText()];
  for (const auto& r : job.reports) {
    EXPECT_GT(r.trials, 0) << r.workload;
    EXPECT_EQ(per_workload[r.workload], r.trials) << r.workload;
    EXPECT_EQ(r.spec.weight, tasks[&r - job.reports.data()].weight);
  }
  EXPECT_EQ(job.reports[2].workload, "conv2d[N=1,C=8,H=10,W=10,K=16,R=3,S=3,stride=1,pad=1,dilation=1,groups=1]+bias,relu");
}

// Five small gemms that differ in K: a job of several tasks of one operator.
std::vector<TuneTaskSpec> FiveGemms() {
  std::vector<TuneTaskSpec> tasks;
  for (int k : {16, 32, 48, 64, 80}) tasks.push_back(Task("gemm", fmt::format("M=32,N=32,K={}", k)));
  return tasks;
}

TEST(Tuner, WithRoundsOverlappedEveryTaskGetsAFirstRoundBeforeAnyASecond) {
  // Three rounds are out at once (two built or measured, one proposed): a task whose first round is
  // still out must not get its second and third from the first-round rule.
  const std::string path = TempDb("tasks_overlapped");
  const std::vector<TuneTaskSpec> tasks = FiveGemms();
  TuneConfig c = Config(11, 5 * 8, 8);
  c.overlap_rounds = true;
  Job job;
  RunJob(job, path, c, tasks);
  for (const auto& r : job.reports) EXPECT_EQ(r.trials, 8) << r.workload;
}

TEST(Tuner, ABudgetShortOfAFullRoundPerTaskGivesEveryTaskASmallerFirstRound) {
  const std::vector<TuneTaskSpec> tasks = FiveGemms();
  for (bool overlap : {false, true}) {
    TuneConfig c = Config(11, 5 * 4 + 2, 8);  // 22 trials: not a round of 8 each
    c.overlap_rounds = overlap;
    Job job;
    RunJob(job, TempDb(fmt::format("tasks_short_{}", overlap)), c, tasks);
    EXPECT_EQ(TotalTrials(job.reports), 22);
    for (const auto& r : job.reports) EXPECT_GE(r.trials, 4) << r.workload << " overlap " << overlap;
  }
  // Fewer trials than tasks: one each while they last.
  Job few;
  RunJob(few, TempDb("tasks_fewer"), Config(11, 3, 8), tasks);
  const std::vector<int> expected = {1, 1, 1, 0, 0};
  for (size_t i = 0; i < tasks.size(); ++i) EXPECT_EQ(few.reports[i].trials, expected[i]) << i;
}

TEST(Tuner, ASmallSpaceIsExhaustedAndTheJobEnds) {
  // gemm 1x1x2 has a handful of schedules: the job ends early, having measured each once.
  const std::string path = TempDb("exhaust");
  const TuneTaskSpec tiny = Task("gemm", "M=1,N=1,K=2");
  Job job;
  RunJob(job, path, Config(1, 500, 16), {tiny});
  EXPECT_LT(job.reports[0].trials, 500);
  EXPECT_GT(job.reports[0].trials, 0);
  EXPECT_EQ(Records(path).size(), static_cast<size_t>(job.reports[0].trials));
  Job again;
  RunJob(again, path, Config(1, 500, 16), {tiny});
  EXPECT_EQ(again.reports[0].trials, 0);
  EXPECT_EQ(again.runner.runs, 0);
  EXPECT_EQ(again.reports[0].best_latency_ms, job.reports[0].best_latency_ms) << "reported from the database";
}

TEST(Tuner, StopStoresTheBatchInFlightAndNothingAfter) {
  const std::string path = TempDb("stop");
  std::atomic<bool> stop{false};
  Job job;
  // Stop while the second batch is being measured.
  job.runner.on_run = [&](int runs) {
    if (runs == 2) stop = true;
  };
  RunJob(job, path, Config(9, 100, 8), {kGemm}, stop);
  EXPECT_EQ(job.runner.runs, 2) << "no batch after the stop";
  EXPECT_EQ(job.batches, 2);
  const auto records = Records(path);
  // The batch in flight is stored, except failures an interrupt can cause (a Ctrl-C reaches the
  // compiler and kernel processes too): those are left to be measured again on resume.
  int interrupt_failures = 0;
  for (size_t i = 8; i < job.runner.calls.size(); ++i) {
    interrupt_failures += job.runner.calls[i].result.error_kind == measure::ErrorKind::kBuildError;
  }
  EXPECT_EQ(records.size(), 16u - interrupt_failures);
  EXPECT_EQ(job.reports[0].trials, static_cast<int>(records.size()));
  for (size_t i = 8; i < records.size(); ++i) EXPECT_NE(records[i].error_kind, "BUILD_ERROR");

  // Stopping from the progress callback: exactly one batch.
  const std::string path2 = TempDb("stop2");
  std::atomic<bool> stop2{false};
  Job job2;
  RunJob(job2, path2, Config(9, 100, 8), {kGemm}, stop2, [&](const TuneProgress&) { stop2 = true; });
  EXPECT_EQ(job2.runner.runs, 1);
  EXPECT_EQ(Records(path2).size(), 8u);

  // Stopped before it starts: nothing at all.
  const std::string path3 = TempDb("stop3");
  std::atomic<bool> stopped{true};
  Job job3;
  RunJob(job3, path3, Config(9, 100, 8), {kGemm}, stopped);
  EXPECT_EQ(job3.runner.runs, 0);
  EXPECT_EQ(job3.reports[0].trials, 0);
  EXPECT_TRUE(Records(path3).empty());
}

TEST(Tuner, SameSeedSameMeasurementsDifferentSeedDifferent) {
  const std::vector<TuneTaskSpec> tasks = {kGemm, Task("conv2d", "N=1,C=4,H=8,W=8,K=8,R=3,S=3,pad=1")};
  auto run = [&](const std::string& name, uint64_t seed) {
    const std::string path = TempDb(name);
    Job job;
    RunJob(job, path, Config(seed, 24, 6), tasks);
    return Hashes(Records(path));
  };
  const auto a = run("det_a", 42);
  const auto b = run("det_b", 42);
  const auto c = run("det_c", 43);
  ASSERT_EQ(a.size(), 24u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

// Stores a valid record of `spec` measured at `ms` on `target` with a random schedule of `seed`;
// returns its trace.
// Stores a valid record of `spec` with `trace` measured at `ms`.
void StoreTrace(const std::string& path, const TuneTaskSpec& spec, const tir::Trace& trace, double ms,
                const db::TargetInfo& target = TestTarget()) {
  auto w = tir::MakeWorkload(spec.op, spec.shape, spec.epilogue);
  EXPECT_TRUE(w);
  measure::MeasureResult result;
  result.latencies_ms = {ms};
  result.median_ms = ms;
  result.correct = true;
  auto db = OpenDb(path);
  EXPECT_TRUE(db->CommitBatch({MakeTuningRecord(*w, trace, target, result, nullptr)}));
}

tir::Trace StoreRecord(const std::string& path, const TuneTaskSpec& spec, uint64_t seed, double ms,
                       const db::TargetInfo& target = TestTarget()) {
  auto w = tir::MakeWorkload(spec.op, spec.shape, spec.epilogue);
  EXPECT_TRUE(w);
  auto sch = RandomSchedule(*w, tir::TargetKind::kCpu, seed);
  EXPECT_TRUE(sch);
  StoreTrace(path, spec, sch->trace(), ms, target);
  return sch->trace();
}

// Stores a valid kGemm record of a random schedule (`seed`) measured at `ms` on "Other CPU", a
// device with the test target's architecture.
void StoreRecordOfAnotherDevice(const std::string& path, uint64_t seed, double ms) {
  db::TargetInfo other = TestTarget();
  other.device = "Other CPU";
  StoreRecord(path, kGemm, seed, ms, other);
}

TEST(Tuner, RecordsOfAnotherDeviceSeedTheSearchButAreNotReportedAsTheBest) {
  const std::string path = TempDb("other_device");
  StoreRecordOfAnotherDevice(path, 77, 0.0001);
  Job job;
  RunJob(job, path, Config(4, 8, 4), {kGemm});
  EXPECT_EQ(job.reports[0].trials, 8);
  EXPECT_GT(job.reports[0].best_latency_ms, 0.0001);
}

const TuneTaskSpec kNearGemm = Task("gemm", "M=64,N=48,K=64");
const TuneTaskSpec kFarGemm = Task("gemm", "M=512,N=512,K=512");

std::set<std::string> HashesOf(const std::vector<db::TuningRecord>& records, const TuneTaskSpec& spec) {
  auto w = tir::MakeWorkload(spec.op, spec.shape, spec.epilogue);
  EXPECT_TRUE(w);
  std::set<std::string> out;
  for (const auto& r : records) {
    if (r.workload.key == w->Key()) out.insert(r.trace_hash);
  }
  return out;
}

TEST(Tuner, ANewShapeStartsWithTheBestSchedulesOfTheNearestShapes) {
  const std::string path = TempDb("transfer");
  const tir::Trace fastest = StoreRecord(path, kNearGemm, 11, 0.5);
  StoreRecord(path, kNearGemm, 12, 0.7);
  StoreRecord(path, kFarGemm, 13, 0.1);
  Job job;
  RunJob(job, path, Config(5, 8, 8), {kGemm});
  const TaskReport& r = job.reports[0];
  EXPECT_EQ(r.trials, 8);
  EXPECT_GE(r.transferred, 2);
  EXPECT_LE(r.transferred, 3);
  ASSERT_FALSE(r.transferred_from.empty());
  EXPECT_EQ(r.transferred_from.front(), "gemm[M=64,N=48,K=64]");  // the nearest shape first
  // The nearest shape's fastest trace, adapted to this shape, was measured in the first round.
  auto w = tir::MakeWorkload(kGemm.op, kGemm.shape);
  ASSERT_TRUE(w);
  auto adapted = tir::ReplayOnShape(*w, tir::TargetKind::kCpu, fastest);
  ASSERT_TRUE(adapted) << adapted.error().message;
  EXPECT_TRUE(HashesOf(Records(path), kGemm).count(db::HashTraceJson(adapted->trace().ToJson().dump())));
}

TEST(Tuner, TransferZeroAndAShapeWithRecordsOfItsOwnTakeNoOtherShapesSchedules) {
  const std::string path = TempDb("no_transfer");
  StoreRecord(path, kNearGemm, 11, 0.5);
  TuneConfig off = Config(5, 8, 8);
  off.transfer = 0;
  Job first;
  RunJob(first, path, off, {kGemm});
  EXPECT_EQ(first.reports[0].transferred, 0);
  EXPECT_TRUE(first.reports[0].transferred_from.empty());
  Job resumed;  // the task has valid records of its own now
  RunJob(resumed, path, Config(5, 8, 8), {kGemm});
  EXPECT_EQ(resumed.reports[0].trials, 8);
  EXPECT_EQ(resumed.reports[0].transferred, 0);
}

TEST(Tuner, TransferIsCappedByItsSetting) {
  const std::string path = TempDb("transfer_cap");
  for (uint64_t seed = 20; seed < 28; ++seed) StoreRecord(path, kNearGemm, seed, 0.1 * static_cast<double>(seed));
  TuneConfig c = Config(5, 12, 12);
  c.transfer = 3;
  Job job;
  RunJob(job, path, c, {kGemm});
  EXPECT_EQ(job.reports[0].trials, 12);
  EXPECT_EQ(job.reports[0].transferred, 3);
}

// A gemm schedule of no cpu sketch: its reduction split (sampled) and rfactor-ed (the split-K rule's mark).
tir::Trace PartialSumsTrace(const TuneTaskSpec& spec) {
  auto w = tir::MakeWorkload(spec.op, spec.shape, spec.epilogue);
  EXPECT_TRUE(w);
  tir::Schedule sch(*w, tir::TargetKind::kCpu);
  auto stage = sch.GetStage("C");
  EXPECT_TRUE(stage);
  auto loops = sch.GetLoops(*stage);
  EXPECT_TRUE(loops && loops->size() == 3u);
  auto factors = sch.SamplePerfectTile((*loops)[2], 2, 16);  // a decision, so the search could breed it
  EXPECT_TRUE(factors);
  auto parts = sch.Split((*loops)[2], {(*factors)[0], (*factors)[1]});
  EXPECT_TRUE(parts) << parts.error().message;
  EXPECT_TRUE(sch.RFactor(*stage, (*parts)[0]));
  EXPECT_EQ(SketchOfTrace(sch.trace(), tir::TargetKind::kCpu), nullptr);
  return sch.trace();
}

bool HasRFactor(const db::TuningRecord& r) { return r.trace_json.find("\"rfactor\"") != std::string::npos; }

TEST(Tuner, OnlyTracesOfTheSearchedSketchesSeedTheSearch) {
  const std::string path = TempDb("transfer_sketches");
  StoreTrace(path, kGemm, PartialSumsTrace(kGemm), 0.01);  // the task's own, fastest, of no searched sketch
  StoreTrace(path, kNearGemm, PartialSumsTrace(kNearGemm), 0.01);
  StoreRecord(path, kNearGemm, 11, 0.5);
  Job job;
  RunJob(job, path, Config(5, 48, 8), {kGemm});
  const TaskReport& r = job.reports[0];
  EXPECT_EQ(r.trials, 48);
  EXPECT_DOUBLE_EQ(r.best_latency_ms, 0.01);  // still the best found on this device
  // Its own record seeds nothing, so the task counts as new and takes the neighbour's cpu.tiled
  // schedule, but not the neighbour's faster partial sums.
  EXPECT_EQ(r.transferred, 1);
  int with_rfactor = 0;
  for (const auto& rec : Records(path)) with_rfactor += HasRFactor(rec);
  EXPECT_EQ(with_rfactor, 2);  // the two stored: nothing bred from them, nothing transferred
}

// Records what the tuner teaches it, and whether it was asked to rank before it was taught.
class RecordingModel final : public costmodel::CostModel {
 public:
  std::string Name() const override { return "recording"; }
  std::vector<double> Predict(const tir::Workload&, const std::vector<const tir::Schedule*>& c) override {
    if (updates.empty()) {
      ranked_before_taught = true;
      ++predictions_before_taught;
    }
    return std::vector<double>(c.size(), 1.0);
  }
  bool Steers() const override { return !steers_once_taught || !updates.empty(); }
  void Update(const tir::Workload&, const std::vector<const tir::Schedule*>& c,
              const std::vector<std::optional<double>>& latencies_ms) override {
    EXPECT_EQ(c.size(), latencies_ms.size());
    updates.push_back(latencies_ms);
  }
  bool steers_once_taught = false;  // like XGBoost without a loaded model: no ranking before data
  bool ranked_before_taught = false;
  int predictions_before_taught = 0;
  std::vector<std::vector<std::optional<double>>> updates;
};

std::multiset<double> Latencies(const std::vector<std::optional<double>>& v) {
  std::multiset<double> out;
  for (const auto& ms : v) {
    if (ms) out.insert(*ms);
  }
  return out;
}

TEST(Tuner, AResumedJobTeachesTheModelThisDevicesStoredRecordsFirst) {
  const std::string path = TempDb("teach");
  RecordingModel fresh_model;
  Job first;
  first.model = &fresh_model;
  RunJob(first, path, Config(5, 16, 8), {kGemm});
  ASSERT_FALSE(fresh_model.updates.empty());
  EXPECT_TRUE(fresh_model.ranked_before_taught) << "an empty database has nothing to teach";
  EXPECT_EQ(fresh_model.updates.front().size(), 8u) << "the first update is the first measured round";

  // A record of another device with the same architecture: it seeds the search, but its latency
  // does not teach this device's model.
  StoreRecordOfAnotherDevice(path, 91, 0.123);
  std::multiset<double> stored;
  for (const auto& rec : Records(path)) {
    if (rec.valid() && rec.target.device == TestTarget().device) stored.insert(rec.median_ms);
  }
  ASSERT_GE(stored.size(), 4u) << "the first job stored valid records to teach (the runner fails 5 in 12)";

  RecordingModel resumed_model;
  Job second;
  second.model = &resumed_model;
  RunJob(second, path, Config(5, 16, 8), {kGemm});
  EXPECT_EQ(second.reports[0].trials, 16);
  ASSERT_GE(resumed_model.updates.size(), 2u);
  EXPECT_FALSE(resumed_model.ranked_before_taught) << "taught before the first round is proposed";
  EXPECT_EQ(Latencies(resumed_model.updates.front()), stored) << "every valid stored record of this device";
  EXPECT_EQ(resumed_model.updates[1].size(), 8u) << "then each measured round";
}

// Makes the overlap observable without timing: each Run waits (up to 5 s) until the builder is
// called while it runs, and counts the builds that happened during a run.
struct OverlapProbe {
  std::mutex mu;
  std::condition_variable cv;
  bool running = false;
  int builds_during_runs = 0;

  void Attach(Job& job) {
    job.builder.on_build = [this] {
      std::lock_guard lock(mu);
      if (running) ++builds_during_runs;
      cv.notify_all();
    };
    job.runner.during_run = [this](int) {
      std::unique_lock lock(mu);
      running = true;
      const int before = builds_during_runs;
      cv.wait_for(lock, std::chrono::seconds(5), [&] { return builds_during_runs > before; });
      running = false;
    };
  }
};

TuneConfig Overlapped(TuneConfig c) {
  c.overlap_rounds = true;
  return c;
}

TEST(Tuner, OverlappedRoundsBuildTheNextWhileMeasuringAndMeasureEachTraceOnce) {
  const std::string path = TempDb("overlap");
  Job job;
  OverlapProbe probe;
  probe.Attach(job);
  RunJob(job, path, Overlapped(Config(5, 40, 8)), {kGemm});
  EXPECT_EQ(job.runner.runs, 5);
  EXPECT_EQ(probe.builds_during_runs, 4) << "every round but the first was built while the one before ran";
  // Builds may overlap, so each round's build carries its place in line for the compilers.
  std::set<uint64_t> places;
  for (const auto& o : job.builder.orders) {
    ASSERT_TRUE(o.has_value());
    places.insert(*o);
  }
  EXPECT_EQ(places, (std::set<uint64_t>{0, 1, 2, 3, 4}));
  const auto records = Records(path);
  EXPECT_EQ(records.size(), 40u);
  const auto hashes = Hashes(records);
  EXPECT_EQ(std::set<std::string>(hashes.begin(), hashes.end()).size(), 40u) << "no trace twice";
  EXPECT_EQ(job.reports[0].trials, 40);
  EXPECT_EQ(job.reports[0].curve.size(), 5u);
  EXPECT_EQ(records[0].trace_json, DefaultTraceJson(kGemm)) << "the default is still measured first";

  // Several tasks share the budget the same way; a resumed overlapped job measures nothing again.
  const std::vector<TuneTaskSpec> tasks = {kGemm, Task("conv2d", "N=1,C=4,H=8,W=8,K=8,R=3,S=3,pad=1")};
  const std::string path2 = TempDb("overlap2");
  Job first, again;
  RunJob(first, path2, Overlapped(Config(6, 36, 6)), tasks);
  EXPECT_EQ(TotalTrials(first.reports), 36);
  RunJob(again, path2, Overlapped(Config(6, 36, 6)), tasks);
  const auto all = Hashes(Records(path2));
  EXPECT_EQ(all.size(), 72u);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), 72u);
}

TEST(Tuner, OverlappedRoundsWaitForTheFirstMeasurementsBeforeProposingAThirdBlindRound) {
  // How often one proposal asks the model: a job of one round.
  RecordingModel one_round_model;
  one_round_model.steers_once_taught = true;
  Job one;
  one.model = &one_round_model;
  RunJob(one, TempDb("blind_one"), Overlapped(Config(3, 8, 8)), {kGemm});
  const int per_proposal = one_round_model.predictions_before_taught;
  ASSERT_GT(per_proposal, 0);

  // With rounds overlapped, two rounds are out before anything is measured; the third is proposed
  // once the first is measured (and the model taught), not while it is measured.
  RecordingModel model;
  model.steers_once_taught = true;
  Job job;
  job.model = &model;
  RunJob(job, TempDb("blind_three"), Overlapped(Config(3, 40, 8)), {kGemm});
  EXPECT_EQ(job.reports[0].trials, 40);
  EXPECT_EQ(model.predictions_before_taught, 2 * per_proposal) << "two blind proposals, not three";

  // A model that ranks from the start does not hold the pipeline back: three proposals before the
  // first measurements are in.
  RecordingModel steering;
  Job steered;
  steered.model = &steering;
  RunJob(steered, TempDb("blind_steered"), Overlapped(Config(3, 40, 8)), {kGemm});
  EXPECT_EQ(steering.predictions_before_taught, 3 * per_proposal);
}

TEST(Tuner, OverlappedRoundsAreReproducibleAndStopCleanly) {
  auto run = [](const std::string& name) {
    const std::string path = TempDb(name);
    Job job;
    RunJob(job, path, Overlapped(Config(11, 30, 6)), {kGemm});
    return Hashes(Records(path));
  };
  EXPECT_EQ(run("overlap_det_a"), run("overlap_det_b"));

  // Stopped during the second run: the rounds out are stored, the one proposed ahead is dropped.
  const std::string path = TempDb("overlap_stop");
  std::atomic<bool> stop{false};
  Job job;
  job.runner.during_run = [&](int runs) {
    if (runs == 2) stop = true;
  };
  RunJob(job, path, Overlapped(Config(9, 100, 8)), {kGemm}, stop);
  EXPECT_EQ(job.runner.runs, 2);
  EXPECT_LE(Records(path).size(), 16u) << "the two rounds out when it stopped, nothing after";
  EXPECT_GT(Records(path).size(), 0u);
}

TuneConfig Streamed(TuneConfig c) {
  c.overlap_rounds = true;
  c.stream_runs = true;
  return c;
}

// What a job stored, in an order that does not depend on when each candidate ran.
std::set<std::tuple<std::string, double, std::string>> StoredResults(const std::string& path) {
  std::set<std::tuple<std::string, double, std::string>> out;
  for (const auto& r : Records(path)) out.insert({r.trace_hash, r.median_ms, r.error_kind});
  return out;
}

TEST(Tuner, StreamedRunsStartBeforeTheRoundsLastBuildAndStoreWhatBatchRunsStore) {
  const std::string path = TempDb("stream");
  Job job;
  // Before the last input of each batch is built, wait (up to 5 s) until one of the batch's
  // candidates built before it has been run.
  std::mutex mu;
  std::condition_variable cv;
  std::set<std::string> ran;  // sources of the candidates run so far
  int batches_with_an_early_run = 0;
  int builds = 0;
  job.runner.on_candidate = [&](const measure::BuildResult& b) {
    std::lock_guard lock(mu);
    ran.insert(b.source);
    cv.notify_all();
  };
  job.builder.before_input = [&](const std::vector<measure::BuildResult>& built, size_t count) {
    if (built.size() + 1 < count || count < 2) return;
    std::unique_lock lock(mu);
    ++builds;
    auto one_ran = [&] {
      return std::any_of(built.begin(), built.end(), [&](const measure::BuildResult& b) { return ran.count(b.source) > 0; });
    };
    if (cv.wait_for(lock, std::chrono::seconds(5), one_ran)) ++batches_with_an_early_run;
  };
  RunJob(job, path, Streamed(Config(5, 24, 8)), {kGemm});
  EXPECT_EQ(job.reports[0].trials, 24);
  EXPECT_EQ(job.runner.runs, 24) << "one run per candidate";
  EXPECT_GT(builds, 0);
  EXPECT_EQ(batches_with_an_early_run, builds) << "every batch ran a candidate before its last build";

  // The same job measured a round at a time stores the same results.
  const std::string batched = TempDb("stream_batched");
  Job other;
  RunJob(other, batched, Overlapped(Config(5, 24, 8)), {kGemm});
  EXPECT_EQ(other.runner.runs, 3);
  EXPECT_EQ(StoredResults(path), StoredResults(batched));
  EXPECT_EQ(job.reports[0].best_latency_ms, other.reports[0].best_latency_ms);
}

TEST(Tuner, UnknownWorkloadIsAnError) {
  const std::string path = TempDb("bad");
  auto db = OpenDb(path);
  auto model = costmodel::MakeRandomCostModel(1);
  FakeBuilder builder;
  FakeRunner runner;
  Tuner tuner(Config(1, 10, 5), builder, runner, *db, *model);
  std::atomic<bool> stop{false};
  auto r = tuner.Run({Task("gemv", "M=4")}, stop, nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("gemv"), std::string::npos) << r.error().message;
  EXPECT_EQ(runner.runs, 0);
  TuneTaskSpec weightless = kGemm;
  weightless.weight = 0;
  auto w = tuner.Run({weightless}, stop, nullptr);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("weight"), std::string::npos) << w.error().message;
}

}  // namespace
}  // namespace autotune::search
