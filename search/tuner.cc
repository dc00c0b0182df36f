#include "search/tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <utility>

#include "db/record.h"
#include "measure/compile_slots.h"
#include "search/default_schedule.h"
#include "search/measure_record.h"
#include "search/sketch.h"
#include "search/task_scheduler.h"
#include "search/training_records.h"
#include "search/transfer_seeds.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "support/parallel_for.h"
#include "support/random.h"

namespace autotune::search {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Measured schedules that seed a task's population (the database's best plus this job's).
constexpr int kBestKept = 64;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// The search seed of task `index`: the job seed and the index mixed through the engine's own
// splitmix64 seeding, so tasks search independently and a job is reproducible from its seed.
uint64_t TaskSeed(uint64_t job_seed, size_t index) {
  Random mix(job_seed ^ (0x9e3779b97f4a7c15ULL * (static_cast<uint64_t>(index) + 1)));
  return mix.Next();
}

// Builds handed from the compiling threads to the thread that runs them, in the order they finish.
class ReadyBuilds {
 public:
  void Push(size_t index, const measure::BuildResult& build) {
    {
      std::lock_guard lock(mu_);
      ready_.emplace_back(index, build);
    }
    cv_.notify_one();
  }
  void Close() {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
    }
    cv_.notify_one();
  }
  // The next build, or nothing once closed and drained.
  std::optional<std::pair<size_t, measure::BuildResult>> Pop() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return closed_ || !ready_.empty(); });
    if (ready_.empty()) return std::nullopt;
    auto next = std::move(ready_.front());
    ready_.pop_front();
    return next;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<size_t, measure::BuildResult>> ready_;
  bool closed_ = false;
};

// A measured valid schedule.
struct MeasuredSchedule {
  double ms = 0;
  tir::Schedule schedule;
  std::string trace_hash;
};

// What the loop keeps per task.
struct TaskState {
  tir::Workload workload;
  std::string key;
  bool started = false;  // the database was read and the search made (on the task's first round)
  bool finished = false;
  bool default_proposed = false;  // the first round considered the default schedule
  std::optional<EvolutionarySearch> search;
  std::unordered_set<std::string> measured;  // trace hashes measured on this target: database + this job
  std::unordered_set<std::string> in_flight; // proposed, not yet measured (rounds out or ahead)
  std::vector<MeasuredSchedule> best;        // fastest first, at most kBestKept, of the searched sketches
  std::function<bool(const tir::Schedule&)> searched;  // whether a schedule is of a sketch the job searches
  std::vector<TransferredSchedule> transfer; // other shapes' schedules for the first round (then cleared)
  double best_ms = kInf;                     // the reported best (this device only)
};

// Whether a schedule of `workload` is of one of the sketches a job searches (`sketches`; empty: the
// default ones) as they are offered for it.
std::function<bool(const tir::Schedule&)> SearchedSketchTest(const tir::Workload& workload, tir::TargetKind target,
                                                           const std::vector<std::string>& sketches) {
  std::vector<const SketchSpec*> offered = ApplicableSketches(tir::Schedule(workload, target), sketches);
  return [offered = std::move(offered), target](const tir::Schedule& sch) {
    const SketchSpec* s = SketchOfTrace(sch.trace(), target);
    return s != nullptr && std::find(offered.begin(), offered.end(), s) != offered.end();
  };
}

// Inserts a valid measured schedule into `best` (fastest first, ties in arrival order), keeping
// at most kBestKept.
void AddBest(std::vector<MeasuredSchedule>& best, MeasuredSchedule m) {
  auto it = std::upper_bound(best.begin(), best.end(), m.ms,
                             [](double ms, const MeasuredSchedule& e) { return ms < e.ms; });
  if (it - best.begin() >= kBestKept) return;
  best.insert(it, std::move(m));
  if (static_cast<int>(best.size()) > kBestKept) best.pop_back();
}

// A failure that an interrupt (Ctrl-C reaches the compiler and kernel children too) can cause; such
// results of the batch in flight when the job is stopped are not stored, so a resumed job measures
// those candidates again instead of taking them for failed forever.
bool InterruptCanCause(measure::ErrorKind k) {
  return k == measure::ErrorKind::kBuildError || k == measure::ErrorKind::kBuildTimeout ||
         k == measure::ErrorKind::kRunError || k == measure::ErrorKind::kRunTimeout;
}

bool Valid(const measure::MeasureResult& r) { return r.ok() && r.correct && r.median_ms > 0; }

// The stored records' traces replayed on the workload, on every usable core; nullopt where a trace no
// longer parses or replays (a record of an older schedule space).
std::vector<std::optional<tir::Schedule>> ReplayRecords(const tir::Workload& workload, tir::TargetKind target,
                                                        const std::vector<db::TuningRecord>& records) {
  std::vector<std::optional<tir::Schedule>> out(records.size());
  ParallelFor(UsableCores(), records.size(), [&](size_t k) {
    if (auto sch = ReplayStoredTrace(records[k].trace_json, workload, target)) out[k] = std::move(sch).value();
  });
  return out;
}

// One round: a task's batch and its builds, measured as one.
struct Round {
  int task = -1;
  std::vector<Candidate> batch;
  std::vector<measure::BuildResult> builds;  // one per candidate
};

}  // namespace

// Lowers every candidate (a schedule that does not lower is an INVALID_SCHEDULE result) and builds
// the ones that lowered, in one call to the builder.
std::vector<measure::BuildResult> Tuner::BuildBatch(const tir::Workload& workload, const std::vector<Candidate>& batch,
                                                    const measure::Builder::OnBuilt& on_built) {
  std::vector<measure::BuildResult> builds(batch.size());
  std::vector<measure::BuildInput> inputs;
  std::vector<size_t> input_of;  // inputs[k] is batch[input_of[k]]
  tir::LowerOptions lo;
  lo.name = "kernel_" + workload.op;
  for (size_t k = 0; k < batch.size(); ++k) {
    auto f = tir::Lower(batch[k].schedule.state(), lo);
    if (!f) {
      builds[k].error_kind = measure::ErrorKind::kInvalidSchedule;
      builds[k].error_message = f.error().message;
      if (on_built) on_built(k, builds[k]);
      continue;
    }
    inputs.push_back(measure::BuildInput::FromFunc(std::move(f).value()));
    input_of.push_back(k);
  }
  if (inputs.empty()) return builds;
  measure::Builder::OnBuilt on_input_built;
  if (on_built) {
    on_input_built = [&](size_t i, const measure::BuildResult& b) { on_built(input_of.at(i), b); };
  }
  auto built = builder_.Build(inputs, on_input_built);
  for (size_t k = 0; k < input_of.size(); ++k) {
    if (k < built.size()) {
      builds[input_of[k]] = std::move(built[k]);
    } else {
      builds[input_of[k]].error_kind = measure::ErrorKind::kBuildError;
      builds[input_of[k]].error_message = "the builder returned no result";
      if (on_built) on_built(input_of[k], builds[input_of[k]]);
    }
  }
  return builds;
}

void Tuner::BuildAndRunAsBuilt(const tir::Workload& workload, const std::vector<Candidate>& batch, std::mutex& run_mu,
                               std::vector<measure::BuildResult>& builds, std::vector<measure::MeasureResult>& results,
                               double& build_seconds, double& run_seconds) {
  results.assign(batch.size(), {});
  ReadyBuilds ready;
  bool unmeasured = false;  // the runner returned nothing for a candidate (see below)
  std::thread runs([&] {
    while (auto next = ready.Pop()) {
      std::lock_guard lock(run_mu);  // one run at a time, this round's and the others'
      const auto run_start = Clock::now();
      std::vector<measure::MeasureResult> one = runner_.Run(workload, {next->second});
      run_seconds += Seconds(run_start);
      if (one.empty()) {
        unmeasured = true;
      } else {
        results[next->first] = std::move(one.front());
      }
    }
  });
  const auto build_start = Clock::now();
  builds = BuildBatch(workload, batch, [&](size_t k, const measure::BuildResult& b) { ready.Push(k, b); });
  build_seconds = Seconds(build_start);
  ready.Close();
  runs.join();
  // A round with a candidate the runner did not measure counts as not measured at all, like a batch
  // Run that returns nothing: never stored with an empty result.
  if (unmeasured) results.clear();
}

Tuner::Tuner(TuneConfig config, measure::Builder& builder, measure::Runner& runner, db::TuningDatabase& db,
             CostModel& model)
    : config_(std::move(config)), builder_(builder), runner_(runner), db_(db), model_(model) {}

Result<std::vector<TaskReport>> Tuner::Run(const std::vector<TuneTaskSpec>& tasks, const std::atomic<bool>& stop,
                                           const std::function<void(const TuneProgress&)>& on_batch) {
  const auto job_start = Clock::now();
  const tir::TargetKind target = config_.target;
  const db::TargetInfo& target_info = config_.target_info;
  const db::TargetQuery query{target_info.kind, target_info.arch};

  std::vector<TaskReport> reports(tasks.size());
  std::vector<TaskState> states;
  states.reserve(tasks.size());
  std::vector<double> weights;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TuneTaskSpec& spec = tasks[i];
    auto w = tir::MakeWorkload(spec.op, spec.shape, spec.epilogue);
    if (!w) return MakeError(fmt::format("task {} ({} {}): {}", i, spec.op, spec.shape, w.error().message));
    if (!(spec.weight > 0) || !std::isfinite(spec.weight)) {
      return MakeError(fmt::format("task {} ({} {}): the weight must be a positive number, not {}", i, spec.op,
                                   spec.shape, spec.weight));
    }
    reports[i].spec = spec;
    reports[i].workload = w->CanonicalText();
    TaskState st;
    st.workload = std::move(w).value();
    st.key = st.workload.Key();
    states.push_back(std::move(st));
    weights.push_back(spec.weight);
  }
  if (tasks.empty()) return reports;

  // Reads what earlier jobs measured and makes the task's search, on the task's first round.
  auto start_task = [&](size_t i) -> Result<void> {
    TaskState& st = states[i];
    auto measured = db_.MeasuredTraceHashes(st.key, target_info);
    if (!measured) return MakeError(fmt::format("reading '{}': {}", db_.path(), measured.error().message));
    st.measured = std::move(*measured);
    auto stored = db_.Best(st.key, query, 0);  // every valid record, fastest first
    if (!stored) return MakeError(fmt::format("reading '{}': {}", db_.path(), stored.error().message));
    std::vector<std::optional<tir::Schedule>> replayed = ReplayRecords(st.workload, target, *stored);
    auto usable = [&](size_t k) { return replayed[k] && (*stored)[k].valid() && (*stored)[k].median_ms > 0; };
    // This device's records teach the cost model before the task's first round, so a job that resumes
    // (a later part, or the same tune run again) steers from its first round instead of learning the
    // workload again. Another device's latencies would not compare with this one's.
    std::vector<const tir::Schedule*> known;
    std::vector<std::optional<double>> known_ms;
    for (size_t k = 0; k < stored->size(); ++k) {
      if (!usable(k) || (*stored)[k].target.device != target_info.device) continue;
      known.push_back(&*replayed[k]);
      known_ms.emplace_back((*stored)[k].median_ms);
    }
    if (!known.empty()) {
      const auto model_start = Clock::now();
      model_.Update(st.workload, known, known_ms);
      reports[i].model_seconds += Seconds(model_start);
    }
    // Only traces of the sketches this job searches seed it (`--sketches`); the others still teach
    // the model above and count as the best found.
    st.searched = SearchedSketchTest(st.workload, target, config_.evolution.sketches);
    for (size_t k = 0; k < stored->size(); ++k) {
      if (!usable(k)) continue;
      const db::TuningRecord& rec = (*stored)[k];
      // Records of another device with this architecture seed the population, but only this
      // device's count as the best found.
      if (rec.target.device == target_info.device && rec.median_ms < st.best_ms) {
        st.best_ms = rec.median_ms;
        reports[i].best_latency_ms = rec.median_ms;
        reports[i].best_gflops = st.workload.flops / (rec.median_ms * 1e6);
        reports[i].best_trace_json = rec.trace_json;
      }
      if (st.best.size() < static_cast<size_t>(kBestKept) && st.searched(*replayed[k])) {
        AddBest(st.best, MeasuredSchedule{rec.median_ms, std::move(*replayed[k]), rec.trace_hash});
      }
    }
    // A shape new to this target starts from what its neighbours found (the same architecture's
    // records, as the seeds above).
    if (config_.transfer > 0 && st.best.empty()) {
      auto others = db_.BestOfEachWorkload(st.workload.op, query, kTransferPerShape);
      if (!others) return MakeError(fmt::format("reading '{}': {}", db_.path(), others.error().message));
      st.transfer = NearestShapeSchedules(st.workload, target, *others);
      std::erase_if(st.transfer, [&](const TransferredSchedule& t) { return !st.searched(t.schedule); });
    }
    st.search.emplace(st.workload, target, config_.evolution, TaskSeed(config_.seed, i));
    st.started = true;
    return {};
  };

  TaskScheduler scheduler(weights);
  int trials_done = 0;
  int in_flight = 0;  // candidates proposed and not yet accounted

  // ---- propose one round: a task's batch ----
  // nullopt when the budget is spoken for or every task is finished.
  auto prepare = [&]() -> Result<std::optional<Round>> {
    while (!stop.load() && trials_done + in_flight < config_.trials) {
      const int t = scheduler.Next();
      if (t < 0) return std::optional<Round>();
      if (t >= static_cast<int>(tasks.size()) || states[t].finished) {
        return MakeError(fmt::format("internal error: the task scheduler picked task {}, which is finished or unknown", t));
      }
      TaskState& st = states[t];
      TaskReport& report = reports[t];
      const auto propose_start = Clock::now();
      const double model_before = report.model_seconds;
      if (!st.started) {
        if (auto r = start_task(t); !r) return r.error();
      }
      const int left = config_.trials - trials_done - in_flight;
      int n = std::min(std::max(1, config_.batch_size), left);
      if (!st.default_proposed) {
        int waiting = 0;  // tasks without a first round, this one included
        for (const TaskState& other : states) waiting += !other.default_proposed && !other.finished;
        n = FirstRoundSize(left, waiting, config_.batch_size);
      }
      Round round;
      round.task = t;
      std::vector<Candidate>& batch = round.batch;
      std::unordered_set<std::string> proposed = st.measured;
      proposed.insert(st.in_flight.begin(), st.in_flight.end());
      if (!st.default_proposed) {
        st.default_proposed = true;
        // The first batch of the task holds its default schedule, so the best is never slower than it,
        // and the hand-picked schedule of every other sketch offered for the workload.
        for (auto& def : DefaultSchedules(st.workload, target, config_.evolution.sketches)) {
          if (static_cast<int>(batch.size()) >= n) break;
          std::string hash = db::HashTraceJson(def.trace().ToJson().dump());
          if (!proposed.insert(hash).second) continue;
          st.search->MarkProposed(def);
          batch.push_back(Candidate{std::move(def), std::move(hash), 0});
        }
        for (auto& t : st.transfer) {
          if (static_cast<int>(batch.size()) >= n || report.transferred >= config_.transfer) break;
          std::string hash = db::HashTraceJson(t.schedule.trace().ToJson().dump());
          if (proposed.count(hash) || !st.search->Adopt(t.schedule)) continue;
          proposed.insert(hash);
          ++report.transferred;
          auto& from = report.transferred_from;
          if (std::find(from.begin(), from.end(), t.from) == from.end()) from.push_back(t.from);
          batch.push_back(Candidate{std::move(t.schedule), std::move(hash), 0});
        }
        st.transfer.clear();
      }
      if (static_cast<int>(batch.size()) < n) {
        std::vector<tir::Schedule> best_schedules;
        best_schedules.reserve(st.best.size());
        for (const auto& b : st.best) best_schedules.push_back(b.schedule);
        auto more = st.search->NextBatch(n - static_cast<int>(batch.size()), model_, proposed, best_schedules);
        for (auto& c : more) {
          if (!proposed.insert(c.trace_hash).second) continue;  // the search promises distinct new traces
          batch.push_back(std::move(c));
        }
      }
      report.search_seconds += Seconds(propose_start) - (report.model_seconds - model_before);
      if (batch.empty()) {
        // Nothing new in this task's space: it gets no more rounds (once the rounds in flight are in).
        st.finished = true;
        scheduler.Finish(t);
        continue;
      }
      for (const auto& c : batch) st.in_flight.insert(c.trace_hash);
      in_flight += static_cast<int>(batch.size());
      scheduler.Start(t);
      return std::optional<Round>(std::move(round));
    }
    return std::optional<Round>();
  };

  // ---- store what a measured round found, update the model, account ----
  auto finish = [&](Round& round, std::vector<measure::MeasureResult>& results, bool interrupted) -> Result<void> {
    TaskState& st = states[round.task];
    TaskReport& report = reports[round.task];
    const std::vector<Candidate>& batch = round.batch;
    const std::vector<measure::BuildResult>& builds = round.builds;
    in_flight -= static_cast<int>(batch.size());
    for (const auto& c : batch) st.in_flight.erase(c.trace_hash);
    std::vector<db::TuningRecord> records;
    std::vector<const tir::Schedule*> kept_schedules;
    std::vector<measure::MeasureResult> kept_results;
    std::vector<size_t> kept;
    for (size_t k = 0; k < batch.size(); ++k) {
      if (interrupted && InterruptCanCause(results[k].error_kind)) continue;
      records.push_back(MakeTuningRecord(st.workload, batch[k].schedule.trace(), target_info, results[k], &builds[k]));
      kept.push_back(k);
    }
    if (!records.empty()) {
      auto stored = db_.CommitBatch(records);
      if (!stored) return MakeError(fmt::format("storing results in '{}': {}", db_.path(), stored.error().message));
    }
    for (size_t k : kept) {
      kept_schedules.push_back(&batch[k].schedule);
      kept_results.push_back(results[k]);
    }
    if (!kept.empty()) {
      std::vector<std::optional<double>> latencies;
      for (const auto& r : kept_results) latencies.push_back(Valid(r) ? std::optional<double>(r.median_ms) : std::nullopt);
      const auto model_start = Clock::now();
      model_.Update(st.workload, kept_schedules, latencies);
      report.model_seconds += Seconds(model_start);
    }
    for (size_t idx = 0; idx < kept.size(); ++idx) {
      const size_t k = kept[idx];
      const measure::MeasureResult& r = results[k];
      st.measured.insert(batch[k].trace_hash);
      ++report.trials;
      ++trials_done;
      report.build_cpu_seconds += r.build_cpu_seconds;
      report.timed_seconds += r.timed_seconds;
      if (builds[k].cached) ++report.cached_builds;
      if (!Valid(r)) {
        ++report.failed;
        continue;
      }
      if (r.median_ms < st.best_ms) {
        st.best_ms = r.median_ms;
        report.best_latency_ms = r.median_ms;
        report.best_gflops = st.workload.flops / (r.median_ms * 1e6);
        report.best_trace_json = records[idx].trace_json;
      }
      // The default schedule of the first round may be of a sketch the job does not search: it is a
      // floor for the best, not a parent.
      if (st.searched(batch[k].schedule)) {
        AddBest(st.best, MeasuredSchedule{r.median_ms, batch[k].schedule, batch[k].trace_hash});
      }
    }
    report.curve.push_back(std::isfinite(st.best_ms) ? st.best_ms : 0);
    scheduler.Record(round.task, st.best_ms, report.trials);
    return {};
  };

  // Rounds in a pipeline of three stages: proposing (this thread), building (in round order; a round
  // may start compiling while the previous one finishes, see below) and measuring (one round at a
  // time, unless the runner takes more: remote workers compile one batch while they run another).
  // With overlap two rounds are out at once, so while round i is measured, round i+1 is built and
  // round i+2 proposed (with the model as it was: two rounds stale). Without overlap (the cpu
  // target, where builds would disturb the kernels' timings) one round at a time.
  struct InFlight {
    Round round;
    std::vector<measure::MeasureResult> results;
    double build_seconds = 0;
    double run_seconds = 0;
    std::thread worker;
  };
  // Builds of rounds in flight overlap: the builder's compilers take a round's compiles in round
  // order (measure::BuildOrder), so a round whose last compiles still run leaves its idle compilers
  // to the next round instead of holding them until its slowest compile is done.
  std::mutex run_mu;
  const bool serial_runs = runner_.ConcurrentRuns() <= 1;
  const bool stream = config_.overlap_rounds && config_.stream_runs && serial_runs;
  std::deque<InFlight> rounds;
  uint64_t launched = 0;
  auto launch = [&](Round round) {
    InFlight& f = rounds.emplace_back();
    f.round = std::move(round);
    f.worker = std::thread([this, &f, &states, &run_mu, serial_runs, stream, place = launched++] {
      const tir::Workload& workload = states[f.round.task].workload;
      if (stream) {
        const measure::BuildOrder order(place);
        BuildAndRunAsBuilt(workload, f.round.batch, run_mu, f.round.builds, f.results, f.build_seconds, f.run_seconds);
        return;
      }
      {
        const measure::BuildOrder order(place);
        const auto build_start = Clock::now();
        f.round.builds = BuildBatch(workload, f.round.batch);
        f.build_seconds = Seconds(build_start);
      }
      std::unique_lock lock(run_mu, std::defer_lock);
      if (serial_runs) lock.lock();
      const auto run_start = Clock::now();
      f.results = runner_.Run(workload, f.round.builds);
      f.run_seconds = Seconds(run_start);
    });
  };
  // Every path out of the loop waits for the rounds still out (their results are dropped on an
  // error; after an interrupt they are stored below).
  struct JoinAll {
    std::deque<InFlight>& rounds;
    ~JoinAll() {
      for (auto& f : rounds) {
        if (f.worker.joinable()) f.worker.join();
      }
    }
  } join_all{rounds};
  const int depth = config_.overlap_rounds ? 2 : 1;
  auto last_accounted = job_start;
  bool interrupted = false;
  bool exhausted = false;  // prepare found nothing more to do
  auto top_up = [&]() -> Result<void> {
    while (!exhausted && !stop.load() && static_cast<int>(rounds.size()) < depth) {
      auto next = prepare();
      if (!next) return next.error();
      if (!*next) {
        exhausted = true;
        break;
      }
      if (stop.load()) break;  // stopped while it was proposed: nothing of it is measured
      launch(std::move(**next));
    }
    return {};
  };
  if (auto r = top_up(); !r) return r.error();
  while (!rounds.empty()) {
    // Propose the next round while the oldest is measured (and the one after it built); but not while
    // nothing is measured yet and the model does not steer: a round proposed now would be a third blind
    // one, while one proposed once the first round is in is steered by it (the second round keeps the
    // device busy meanwhile). On the H200 blind rounds' median latency was 2.4-2.5x the steered ones'.
    const bool blind = trials_done == 0 && !model_.Steers();
    std::optional<Round> ahead;
    if (config_.overlap_rounds && !exhausted && !stop.load() && !blind) {
      auto next = prepare();
      if (!next) return next.error();
      if (*next) {
        ahead = std::move(**next);
      } else {
        exhausted = true;
      }
    }
    InFlight& f = rounds.front();
    const auto wait_start = Clock::now();
    f.worker.join();
    Round& round = f.round;
    reports[round.task].wait_seconds += Seconds(wait_start);
    reports[round.task].build_seconds += f.build_seconds;
    reports[round.task].run_seconds += f.run_seconds;
    if (const std::string why = runner_.Unavailable(); !why.empty() && f.results.empty()) {
      return MakeError(fmt::format("measuring {}: {} (every batch before this one is stored)", reports[round.task].workload,
                                   why));
    }
    if (f.results.size() != round.builds.size()) {
      return MakeError(fmt::format("internal error: the runner returned {} results for {} candidates", f.results.size(),
                                   round.builds.size()));
    }
    interrupted = interrupted || stop.load();
    if (auto r = finish(round, f.results, interrupted); !r) return r.error();
    // Wall time goes to the task whose round was accounted, so the tasks' seconds add up to the job's.
    reports[round.task].seconds += Seconds(last_accounted);
    last_accounted = Clock::now();
    rounds.pop_front();
    if (on_batch) {
      TuneProgress p;
      p.task = round.task;
      p.trials_done = trials_done;
      p.trials_total = config_.trials;
      p.elapsed_s = Seconds(job_start);
      p.reports = &reports;
      on_batch(p);
    }
    // After a stop, rounds already out are finished and stored; one proposed ahead is
    // dropped (nothing of it was measured).
    if (interrupted) continue;
    if (ahead) launch(std::move(*ahead));
    if (auto r = top_up(); !r) return r.error();
  }
  return reports;
}

}  // namespace autotune::search
