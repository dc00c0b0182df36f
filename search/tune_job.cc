#include "search/tune_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "measure/compile_slots.h"
#include "search/default_schedule.h"
#include "search/measure_record.h"
#include "search/sketch.h"
#include "search/training_records.h"
#include "tir/ops/operator.h"
#include "support/parallel_for.h"
#include "support/random.h"
#include "support/stopwatch.h"

namespace autotune::search {

namespace {

using Clock = std::chrono::steady_clock;
// Measured schedules that seed a task's population (the database's best plus this job's).
constexpr int kBestKept = 64;

// The search seed of task `index`: the job seed and the index mixed through the engine's own
// splitmix64 seeding, so tasks search independently and a job is reproducible from its seed.
uint64_t TaskSeed(uint64_t job_seed, size_t index) {
  Random mix(job_seed ^ (0x9e3779b97f4a7c15ULL * (static_cast<uint64_t>(index) + 1)));
  return mix.Next();
}

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

// A failure that an interrupt (Ctrl-C reaches the compiler and kernel children too) can cause; such
// results of the batch in flight when the job is stopped are not stored, so a resumed job measures
// those candidates again instead of taking them for failed forever.
bool InterruptCanCause(measure::ErrorKind k) {
  return k == measure::ErrorKind::kBuildError || k == measure::ErrorKind::kBuildTimeout ||
         k == measure::ErrorKind::kRunError || k == measure::ErrorKind::kRunTimeout;
}


// The stored records' traces replayed on the workload, on every usable core; nullopt where a trace no
// longer parses or replays (a record of an older schedule space).
std::vector<std::optional<tir::Schedule>> ReplayRecords(const tir::Workload& workload, tir::Target target,
                                                        const std::vector<db::TuningRecord>& records) {
  std::vector<std::optional<tir::Schedule>> out(records.size());
  ParallelFor(UsableCores(), records.size(), [&](size_t k) {
    if (auto sch = ReplayStoredTrace(records[k].trace_json, workload, target)) out[k] = std::move(sch).value();
  });
  return out;
}

// A stored record that can seed a task: valid, and its trace replays on the task's workload.
bool Usable(const db::TuningRecord& rec, const std::optional<tir::Schedule>& replayed) {
  return replayed && rec.valid() && rec.median_ms > 0;
}

std::string TraceHash(const tir::Schedule& sch) { return IdentityOf(sch.trace()).hash; }

}  // namespace

void Tuner::Job::TaskState::AddBest(MeasuredSchedule m) {
  auto it = std::upper_bound(best.begin(), best.end(), m.ms,
                             [](double ms, const MeasuredSchedule& e) { return ms < e.ms; });
  if (it - best.begin() >= kBestKept) return;
  best.insert(it, std::move(m));
  if (static_cast<int>(best.size()) > kBestKept) best.pop_back();
}

Tuner::Job::Job(Tuner& tuner, const std::vector<TuneTaskSpec>& tasks, const std::atomic<bool>& stop,
                const std::function<void(const TuneProgress&)>& on_batch)
    : tuner_(tuner),
      config_(tuner.config_),
      tasks_(tasks),
      stop_(stop),
      on_batch_(on_batch),
      job_start_(Clock::now()),
      query_{tuner.config_.target_info.kind, tuner.config_.target_info.arch},
      serial_runs_(tuner.runner_.ConcurrentRuns() <= 1),
      stream_(tuner.config_.overlap_rounds && tuner.config_.stream_runs && serial_runs_),
      depth_(tuner.config_.overlap_rounds ? 2 : 1),
      last_accounted_(job_start_) {}

Tuner::Job::~Job() {
  for (auto& f : rounds_) {
    if (f.worker.joinable()) f.worker.join();
  }
}

Result<std::vector<TaskReport>> Tuner::Job::Run() {
  auto weights = AddTasks();
  if (!weights) return weights.error();
  if (tasks_.empty()) return std::move(reports_);
  if (config_.trials <= 0) {
    if (auto r = ReportStoredBest(); !r) return r.error();
    return std::move(reports_);
  }
  scheduler_ = TaskScheduler(std::move(*weights));
  if (auto r = FillPipeline(); !r) return r.error();
  while (!rounds_.empty()) {
    auto ahead = ProposeAhead();
    if (!ahead) return ahead.error();
    if (auto r = JoinOldestRound(); !r) return r.error();
    // After a stop, rounds already out are finished and stored; one proposed ahead is dropped
    // (nothing of it was measured).
    if (interrupted_) continue;
    if (*ahead) LaunchRound(std::move(**ahead));
    if (auto r = FillPipeline(); !r) return r.error();
  }
  if (!interrupted_ && !stop_.load()) {
    if (auto r = RemeasureBest(); !r) return r.error();
  }
  return std::move(reports_);
}

// ---- tasks -------------------------------------------------------------------------------------

Result<std::vector<double>> Tuner::Job::AddTasks() {
  reports_.resize(tasks_.size());
  states_.reserve(tasks_.size());
  std::vector<double> weights;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const TuneTaskSpec& spec = tasks_[i];
    auto w = WorkloadOf(spec);
    if (!w) return MakeError(fmt::format("task {} ({} {}): {}", i, spec.op, spec.shape, w.error().message));
    if (!(spec.weight > 0) || !std::isfinite(spec.weight)) {
      return MakeError(fmt::format("task {} ({} {}): the weight must be a positive number, not {}", i, spec.op,
                                   spec.shape, spec.weight));
    }
    reports_[i].spec = spec;
    reports_[i].workload = w->CanonicalText();
    TaskState st;
    st.workload = std::move(w).value();
    st.key = st.workload.Key();
    states_.push_back(std::move(st));
    weights.push_back(spec.weight);
  }
  return weights;
}

Result<void> Tuner::Job::StartTask(size_t i) {
  TaskState& st = states_[i];
  db::TuningDatabase& db = tuner_.db_;
  auto measured = db.MeasuredTraceHashes(st.key, config_.target_info);
  if (!measured) return MakeError(fmt::format("reading '{}': {}", db.path(), measured.error().message));
  st.measured = std::move(*measured);
  auto stored = db.Best(st.key, query_, 0);  // every valid record, fastest first
  if (!stored) return MakeError(fmt::format("reading '{}': {}", db.path(), stored.error().message));
  std::vector<std::optional<tir::Schedule>> replayed = ReplayRecords(st.workload, config_.target, *stored);
  TeachModelStoredRecords(i, *stored, replayed);
  // Only traces of the sketches this job searches seed it (`--sketches`); the others still teach
  // the model above and count as the best found.
  st.searched = SearchedSketchTest(st.workload, config_.target, config_.evolution.sketches);
  SeedFromStoredRecords(i, *stored, replayed);
  if (auto r = FindTransferSeeds(i); !r) return r;
  st.search.emplace(st.workload, config_.target, config_.evolution, TaskSeed(config_.seed, i));
  st.started = true;
  return {};
}

// This device's records teach the cost model before the task's first round, so a job that resumes (a
// later part, or the same tune run again) steers from its first round instead of learning the
// workload again. Another device's latencies would not compare with this one's.
void Tuner::Job::TeachModelStoredRecords(size_t i, const std::vector<db::TuningRecord>& stored,
                                         const std::vector<std::optional<tir::Schedule>>& replayed) {
  std::vector<const tir::Schedule*> known;
  std::vector<std::optional<double>> known_ms;
  for (size_t k = 0; k < stored.size(); ++k) {
    if (!Usable(stored[k], replayed[k]) || stored[k].target.device != config_.target_info.device) continue;
    known.push_back(&*replayed[k]);
    known_ms.emplace_back(stored[k].median_ms);
  }
  if (known.empty()) return;
  const auto model_start = Clock::now();
  tuner_.model_.Update(states_[i].workload, known, known_ms);
  reports_[i].model_seconds += SecondsSince(model_start);
}

// Records of another device with this architecture seed the population, but only this device's
// count as the best found. Moves the seeds out of `replayed`.
void Tuner::Job::SeedFromStoredRecords(size_t i, const std::vector<db::TuningRecord>& stored,
                                       std::vector<std::optional<tir::Schedule>>& replayed) {
  TaskState& st = states_[i];
  for (size_t k = 0; k < stored.size(); ++k) {
    if (!Usable(stored[k], replayed[k])) continue;
    const db::TuningRecord& rec = stored[k];
    if (rec.target.device == config_.target_info.device) TakeStoredBest(i, rec);
    if (st.best.size() < static_cast<size_t>(kBestKept) && st.searched(*replayed[k])) {
      st.AddBest(MeasuredSchedule{rec.median_ms, std::move(*replayed[k]), rec.trace_hash});
    }
  }
}

void Tuner::Job::TakeStoredBest(size_t i, const db::TuningRecord& rec) {
  TaskState& st = states_[i];
  if (!(rec.median_ms < st.best_ms)) return;
  TaskReport& report = reports_[i];
  st.best_ms = rec.median_ms;
  report.best_latency_ms = rec.median_ms;
  report.best_gflops = st.workload.flops / (rec.median_ms * 1e6);
  report.best_trace_json = rec.trace_json;
}

Result<void> Tuner::Job::ReportStoredBest() {
  for (size_t i = 0; i < states_.size(); ++i) {
    if (auto r = TakeStoredBestOf(i); !r) return r;
  }
  return {};
}

Result<void> Tuner::Job::TakeStoredBestOf(size_t i) {
  auto stored = tuner_.db_.Best(states_[i].key, query_, 0);  // fastest first
  if (!stored) return MakeError(fmt::format("reading '{}': {}", tuner_.db_.path(), stored.error().message));
  for (const db::TuningRecord& rec : *stored) {
    if (rec.target.device != config_.target_info.device) continue;
    if (ReplayStoredTrace(rec.trace_json, states_[i].workload, config_.target)) {
      TakeStoredBest(i, rec);
      break;
    }
  }
  return {};
}

// A shape new to this target starts from what its neighbours found (the same architecture's records,
// as the seeds from stored records).
Result<void> Tuner::Job::FindTransferSeeds(size_t i) {
  TaskState& st = states_[i];
  if (config_.transfer <= 0 || !st.best.empty()) return {};
  db::TuningDatabase& db = tuner_.db_;
  auto others = db.BestOfEachWorkload(st.workload.op, query_, kTransferPerShape);
  if (!others) return MakeError(fmt::format("reading '{}': {}", db.path(), others.error().message));
  st.transfer = NearestShapeSchedules(st.workload, config_.target, *others);
  std::erase_if(st.transfer, [&](const TransferredSchedule& t) { return !st.searched(t.schedule); });
  return {};
}

// ---- proposing ---------------------------------------------------------------------------------

Result<std::optional<Tuner::Job::Round>> Tuner::Job::ProposeRound() {
  while (!stop_.load() && trials_done_ + in_flight_ < config_.trials) {
    const int t = scheduler_.Next();
    if (t < 0) return std::optional<Round>();
    if (t >= static_cast<int>(tasks_.size()) || states_[t].finished) {
      return MakeError(
          fmt::format("internal error: the task scheduler picked task {}, which is finished or unknown", t));
    }
    auto round = ProposeBatch(t);
    if (!round) return round.error();
    TaskState& st = states_[t];
    if (round->batch.empty()) {
      // Nothing new in this task's space: it gets no more rounds (once the rounds in flight are in).
      st.finished = true;
      scheduler_.Finish(t);
      continue;
    }
    for (const auto& c : round->batch) st.in_flight.insert(c.trace_hash);
    in_flight_ += static_cast<int>(round->batch.size());
    scheduler_.Start(t);
    return std::optional<Round>(std::move(*round));
  }
  return std::optional<Round>();
}

Result<Tuner::Job::Round> Tuner::Job::ProposeBatch(int t) {
  TaskState& st = states_[t];
  TaskReport& report = reports_[t];
  const auto propose_start = Clock::now();
  const double model_before = report.model_seconds;
  if (!st.started) {
    if (auto r = StartTask(t); !r) return r.error();
  }
  const int n = RoundSize(t);
  Round round;
  round.task = t;
  std::unordered_set<std::string> proposed = st.measured;
  proposed.insert(st.in_flight.begin(), st.in_flight.end());
  if (!st.default_proposed) {
    st.default_proposed = true;
    AddDefaultSchedules(t, n, proposed, round.batch);
    AddTransferredSchedules(t, n, proposed, round.batch);
  }
  if (static_cast<int>(round.batch.size()) < n) AddSearchedCandidates(t, n, proposed, round.batch);
  // The model's learning from stored records (StartTask) is model time, not search time.
  report.search_seconds += SecondsSince(propose_start) - (report.model_seconds - model_before);
  return round;
}

// A batch, or a task's first round: smaller when the budget left does not give every task without a
// first round a full one.
int Tuner::Job::RoundSize(int t) const {
  const int left = config_.trials - trials_done_ - in_flight_;
  if (states_[t].default_proposed) return std::min(std::max(1, config_.batch_size), left);
  int waiting = 0;  // tasks without a first round, this one included
  for (const TaskState& other : states_) waiting += !other.default_proposed && !other.finished;
  return FirstRoundSize(left, waiting, config_.batch_size);
}

// The first batch of a task holds its default schedule, so the best is never slower than it, and the
// hand-picked schedule of every other sketch offered for the workload.
void Tuner::Job::AddDefaultSchedules(int t, int n, std::unordered_set<std::string>& proposed,
                                     std::vector<Candidate>& batch) {
  TaskState& st = states_[t];
  for (auto& def : DefaultSchedules(st.workload, config_.target, config_.evolution.sketches)) {
    if (static_cast<int>(batch.size()) >= n) break;
    std::string hash = TraceHash(def);
    if (!proposed.insert(hash).second) continue;
    st.search->MarkProposed(def);
    batch.push_back(Candidate{std::move(def), std::move(hash), 0});
  }
}

// Other shapes' best schedules (TuneConfig::transfer) that pass the search's checks; the task's first
// round only.
void Tuner::Job::AddTransferredSchedules(int t, int n, std::unordered_set<std::string>& proposed,
                                         std::vector<Candidate>& batch) {
  TaskState& st = states_[t];
  TaskReport& report = reports_[t];
  for (auto& transferred : st.transfer) {
    if (static_cast<int>(batch.size()) >= n || report.transferred >= config_.transfer) break;
    std::string hash = TraceHash(transferred.schedule);
    if (proposed.count(hash) || !st.search->Adopt(transferred.schedule)) continue;
    proposed.insert(hash);
    ++report.transferred;
    auto& from = report.transferred_from;
    if (std::find(from.begin(), from.end(), transferred.from) == from.end()) from.push_back(transferred.from);
    batch.push_back(Candidate{std::move(transferred.schedule), std::move(hash), 0});
  }
  st.transfer.clear();
}

// The rest of the batch from the task's evolutionary search, seeded with its best measured schedules.
void Tuner::Job::AddSearchedCandidates(int t, int n, std::unordered_set<std::string>& proposed,
                                       std::vector<Candidate>& batch) {
  TaskState& st = states_[t];
  std::vector<tir::Schedule> best_schedules;
  best_schedules.reserve(st.best.size());
  for (const auto& b : st.best) best_schedules.push_back(b.schedule);
  auto more = st.search->NextBatch(n - static_cast<int>(batch.size()), tuner_.model_, proposed, best_schedules);
  for (auto& c : more) {
    if (!proposed.insert(c.trace_hash).second) continue;  // the search promises distinct new traces
    batch.push_back(std::move(c));
  }
}

// ---- measuring ---------------------------------------------------------------------------------

// Proposes and launches rounds until `depth_` are out, the job is stopped or nothing is left.
Result<void> Tuner::Job::FillPipeline() {
  while (!exhausted_ && !stop_.load() && static_cast<int>(rounds_.size()) < depth_) {
    auto next = ProposeRound();
    if (!next) return next.error();
    if (!*next) {
      exhausted_ = true;
      break;
    }
    if (stop_.load()) break;  // stopped while it was proposed: nothing of it is measured
    LaunchRound(std::move(**next));
  }
  return {};
}

void Tuner::Job::LaunchRound(Round round) {
  InFlight& f = rounds_.emplace_back();
  f.round = std::move(round);
  const uint64_t place = launched_++;
  f.worker = std::thread([this, &f, place] { MeasureRound(f, place); });
}

// Builds of rounds in flight overlap: the builder's compilers take a round's compiles in round order
// (measure::BuildOrder), so a round whose last compiles still run leaves its idle compilers to the
// next round instead of holding them until its slowest compile is done.
void Tuner::Job::MeasureRound(InFlight& f, uint64_t place) {
  const tir::Workload& workload = states_[f.round.task].workload;
  if (stream_) {
    const measure::BuildOrder order(place);
    tuner_.BuildAndRunAsBuilt(workload, f.round.batch, run_mu_, f.round.builds, f.results, f.build_seconds,
                              f.run_seconds);
    return;
  }
  {
    const measure::BuildOrder order(place);
    const auto build_start = Clock::now();
    f.round.builds = tuner_.BuildBatch(workload, f.round.batch);
    f.build_seconds = SecondsSince(build_start);
  }
  std::unique_lock lock(run_mu_, std::defer_lock);
  if (serial_runs_) lock.lock();
  const auto run_start = Clock::now();
  f.results = tuner_.runner_.Run(workload, f.round.builds);
  f.run_seconds = SecondsSince(run_start);
}

// With overlap_rounds, the next round, proposed while the oldest is measured (and the one after it
// built); but not while nothing is measured yet and the model does not steer: a round proposed then
// would be a third blind one, while one proposed once the first round is in is steered by it (the
// second round keeps the device busy meanwhile).
Result<std::optional<Tuner::Job::Round>> Tuner::Job::ProposeAhead() {
  const bool blind = trials_done_ == 0 && !tuner_.model_.Steers();
  if (!config_.overlap_rounds || exhausted_ || stop_.load() || blind) return std::optional<Round>();
  auto next = ProposeRound();
  if (!next) return next.error();
  if (!*next) exhausted_ = true;
  return next;
}

Result<void> Tuner::Job::JoinOldestRound() {
  InFlight& f = rounds_.front();
  const Round& round = f.round;
  TaskReport& report = reports_[round.task];
  const auto wait_start = Clock::now();
  f.worker.join();
  report.wait_seconds += SecondsSince(wait_start);
  report.build_seconds += f.build_seconds;
  report.run_seconds += f.run_seconds;
  if (const std::string why = tuner_.runner_.Unavailable(); !why.empty() && f.results.empty()) {
    return MakeError(fmt::format("measuring {}: {} (every batch before this one is stored)", report.workload, why));
  }
  if (f.results.size() != round.builds.size()) {
    return MakeError(fmt::format("internal error: the runner returned {} results for {} candidates", f.results.size(),
                                 round.builds.size()));
  }
  interrupted_ = interrupted_ || stop_.load();
  if (auto r = FinishRound(round, f.results); !r) return r;
  // Wall time goes to the task whose round was accounted, so the tasks' seconds add up to the job's.
  report.seconds += SecondsSince(last_accounted_);
  last_accounted_ = Clock::now();
  const int task = round.task;
  rounds_.pop_front();
  ReportProgress(task);
  return {};
}

// ---- finishing ---------------------------------------------------------------------------------

Result<void> Tuner::Job::FinishRound(const Round& round, const std::vector<measure::MeasureResult>& results) {
  TaskState& st = states_[round.task];
  TaskReport& report = reports_[round.task];
  const std::vector<Candidate>& batch = round.batch;
  in_flight_ -= static_cast<int>(batch.size());
  for (const auto& c : batch) st.in_flight.erase(c.trace_hash);
  std::vector<size_t> kept;  // what is stored: all but, after a stop, what an interrupt can cause
  std::vector<db::TuningRecord> records;
  for (size_t k = 0; k < batch.size(); ++k) {
    if (interrupted_ && InterruptCanCause(results[k].error_kind)) continue;
    records.push_back(
        MakeTuningRecord(st.workload, batch[k].schedule.trace(), config_.target_info, results[k], &round.builds[k]));
    kept.push_back(k);
  }
  db::TuningDatabase& db = tuner_.db_;
  if (!records.empty()) {
    auto stored = db.CommitBatch(records);
    if (!stored) return MakeError(fmt::format("storing results in '{}': {}", db.path(), stored.error().message));
  }
  if (!kept.empty()) {
    std::vector<const tir::Schedule*> schedules;
    std::vector<std::optional<double>> latencies;
    for (size_t k : kept) {
      schedules.push_back(&batch[k].schedule);
      latencies.push_back(Valid(results[k]) ? std::optional<double>(results[k].median_ms) : std::nullopt);
    }
    const auto model_start = Clock::now();
    tuner_.model_.Update(st.workload, schedules, latencies);
    report.model_seconds += SecondsSince(model_start);
  }
  for (size_t idx = 0; idx < kept.size(); ++idx) {
    const size_t k = kept[idx];
    Account(st, report, batch[k], round.builds[k], results[k], records[idx].trace_json);
  }
  report.curve.push_back(std::isfinite(st.best_ms) ? st.best_ms : 0);
  scheduler_.Record(round.task, st.best_ms, report.trials);
  return {};
}

// One stored result: counted, and the best so far when it is valid and faster.
void Tuner::Job::Account(TaskState& st, TaskReport& report, const Candidate& c, const measure::BuildResult& build,
                         const measure::MeasureResult& r, const std::string& trace_json) {
  st.measured.insert(c.trace_hash);
  ++report.trials;
  ++trials_done_;
  report.build_cpu_seconds += r.build_cpu_seconds;
  report.timed_seconds += r.timed_seconds;
  if (build.cached) ++report.cached_builds;
  if (!Valid(r)) {
    ++report.failed;
    return;
  }
  if (r.median_ms < st.best_ms) {
    st.best_ms = r.median_ms;
    report.best_latency_ms = r.median_ms;
    report.best_gflops = st.workload.flops / (r.median_ms * 1e6);
    report.best_trace_json = trace_json;
  }
  // The default schedule of the first round may be of a sketch the job does not search: it is a floor
  // for the best, not a parent.
  if (st.searched(c.schedule)) st.AddBest(MeasuredSchedule{r.median_ms, c.schedule, c.trace_hash});
}

void Tuner::Job::ReportProgress(int task) const {
  if (!on_batch_) return;
  TuneProgress p;
  p.task = task;
  p.trials_done = trials_done_;
  p.trials_total = config_.trials;
  p.elapsed_s = SecondsSince(job_start_);
  p.reports = &reports_;
  on_batch_(p);
}

}  // namespace autotune::search
