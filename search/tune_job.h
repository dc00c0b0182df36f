// One Tuner::Run (search/tuner.h) as a job object whose steps have names. Internal to search/: only
// tuner.cc and tune_job.cc include it.
//
//   Run                 until the budget is spent, every task is exhausted or `stop` is set:
//     FillPipeline        propose and launch rounds until `depth` of them are out
//       ProposeRound        the scheduler's next task and its batch (StartTask on the task's first)
//       LaunchRound         builds and measures the batch on a worker thread (MeasureRound)
//     ProposeAhead        with overlap_rounds, the next round while the oldest is measured
//     JoinOldestRound     waits for the oldest round and finishes it (FinishRound: store the results,
//                         teach the model, account), then reports progress
//   RemeasureBest       unless stopped: each task's fastest records measured again (search/remeasure_best.cc)
//
// Rounds go through a pipeline of three stages: proposing (the job's thread), building (in round
// order; a round may start compiling while the previous one finishes, measure::BuildOrder) and
// measuring (one round at a time, unless the runner takes more: remote workers compile one batch
// while they run another). With overlap_rounds two rounds are out at once, so while round i is
// measured, round i+1 is built and round i+2 proposed (with the model as it was: two rounds stale).
// Without overlap (the cpu target, where builds would disturb the kernels' timings) one round at a
// time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "db/record.h"
#include "search/evolutionary_search.h"
#include "search/task_scheduler.h"
#include "search/transfer_seeds.h"
#include "search/tuner.h"

namespace autotune::search {

// A measurement that counts: no error, the answer checked, a latency.
inline bool Valid(const measure::MeasureResult& r) { return r.ok() && r.correct && r.median_ms > 0; }

class Tuner::Job {
 public:
  Job(Tuner& tuner, const std::vector<TuneTaskSpec>& tasks, const std::atomic<bool>& stop,
      const std::function<void(const TuneProgress&)>& on_batch);
  // Every way out of Run waits here for the rounds still out (their results are dropped on an error).
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // What Tuner::Run returns.
  Result<std::vector<TaskReport>> Run();

 private:
  using Clock = std::chrono::steady_clock;

  // A measured valid schedule.
  struct MeasuredSchedule {
    double ms = 0;
    tir::Schedule schedule;
    std::string trace_hash;
  };

  // What the job keeps per task.
  struct TaskState {
    tir::Workload workload;
    std::string key;
    bool started = false;  // the database was read and the search made (on the task's first round)
    bool finished = false;
    bool default_proposed = false;  // the first round considered the default schedule
    std::optional<EvolutionarySearch> search;
    std::unordered_set<std::string> measured;   // trace hashes measured on this target: database + this job
    std::unordered_set<std::string> in_flight;  // proposed, not yet measured (rounds out or ahead)
    std::vector<MeasuredSchedule> best;         // fastest first, at most kBestKept, of the searched sketches
    std::function<bool(const tir::Schedule&)> searched;  // whether a schedule is of a sketch the job searches
    std::vector<TransferredSchedule> transfer;  // other shapes' schedules for the first round (then cleared)
    double best_ms = std::numeric_limits<double>::infinity();  // the reported best (this device only)

    // Inserts into `best` (fastest first, ties in arrival order), keeping at most kBestKept.
    void AddBest(MeasuredSchedule m);
  };

  // One round: a task's batch and its builds, measured as one.
  struct Round {
    int task = -1;
    std::vector<Candidate> batch;
    std::vector<measure::BuildResult> builds;  // one per candidate
  };

  // A launched round and what its worker thread measured.
  struct InFlight {
    Round round;
    std::vector<measure::MeasureResult> results;
    double build_seconds = 0;
    double run_seconds = 0;
    std::thread worker;
  };

  // ---- tasks ----
  // Checks the task specs and makes their states and reports; the scheduler's weights.
  Result<std::vector<double>> AddTasks();
  // Reads what earlier jobs measured and makes the task's search, on the task's first round.
  Result<void> StartTask(size_t i);
  void TeachModelStoredRecords(size_t i, const std::vector<db::TuningRecord>& stored,
                               const std::vector<std::optional<tir::Schedule>>& replayed);
  void SeedFromStoredRecords(size_t i, const std::vector<db::TuningRecord>& stored,
                             std::vector<std::optional<tir::Schedule>>& replayed);
  Result<void> FindTransferSeeds(size_t i);
  // A job with nothing left to measure reports each task's stored best on this device.
  Result<void> ReportStoredBest();
  // Task i's fastest stored record on this device (that replays) as its best, when faster.
  Result<void> TakeStoredBestOf(size_t i);
  // `rec` (of this device) as task i's best, when faster than the best so far.
  void TakeStoredBest(size_t i, const db::TuningRecord& rec);

  // ---- proposing ----
  // The next round; nullopt when the budget is spoken for or every task is finished.
  Result<std::optional<Round>> ProposeRound();
  // The batch of task `t`'s next round; empty when its space has nothing new.
  Result<Round> ProposeBatch(int t);
  int RoundSize(int t) const;
  // The candidates are appended to `batch` (up to `n` in all) and their hashes to `proposed`.
  void AddDefaultSchedules(int t, int n, std::unordered_set<std::string>& proposed, std::vector<Candidate>& batch);
  void AddTransferredSchedules(int t, int n, std::unordered_set<std::string>& proposed, std::vector<Candidate>& batch);
  void AddSearchedCandidates(int t, int n, std::unordered_set<std::string>& proposed, std::vector<Candidate>& batch);

  // ---- measuring ----
  Result<void> FillPipeline();
  void LaunchRound(Round round);
  // The body of a round's worker thread; `place` is the round's launch order.
  void MeasureRound(InFlight& f, uint64_t place);
  Result<std::optional<Round>> ProposeAhead();
  Result<void> JoinOldestRound();

  // ---- finishing ----
  // Stores what a measured round found, updates the model and accounts.
  Result<void> FinishRound(const Round& round, const std::vector<measure::MeasureResult>& results);
  void Account(TaskState& st, TaskReport& report, const Candidate& c, const measure::BuildResult& build,
               const measure::MeasureResult& r, const std::string& trace_json);
  void ReportProgress(int task) const;

  // ---- re-measuring the best (search/remeasure_best.cc) ----
  Result<void> RemeasureBest();
  // One pass over task i: its fastest TuneConfig::remeasure_best valid records on this device that
  // `done` does not hold, measured again and stored; false when there were none.
  Result<bool> RemeasurePass(size_t i, std::unordered_set<std::string>& done);
  // The stored record of `old` with this measurement, the first one kept in its info.
  Result<void> StoreRemeasurement(const tir::Workload& workload, const db::TuningRecord& old,
                                  const tir::Schedule& schedule, const measure::MeasureResult& r,
                                  const measure::BuildResult& build);

  Tuner& tuner_;
  const TuneConfig& config_;
  const std::vector<TuneTaskSpec>& tasks_;
  const std::atomic<bool>& stop_;
  const std::function<void(const TuneProgress&)>& on_batch_;
  const Clock::time_point job_start_;
  const db::TargetQuery query_;  // the records of this target's architecture (any device)

  std::vector<TaskReport> reports_;
  std::vector<TaskState> states_;
  TaskScheduler scheduler_{std::vector<double>{}};  // made with the tasks' weights in Run
  int trials_done_ = 0;
  int in_flight_ = 0;  // candidates proposed and not yet accounted

  std::mutex run_mu_;  // held by a round's runs when the runner takes one Run at a time
  const bool serial_runs_;
  const bool stream_;  // TuneConfig::stream_runs, where it applies
  const int depth_;    // rounds out at once
  std::deque<InFlight> rounds_;  // launched, oldest first
  uint64_t launched_ = 0;
  Clock::time_point last_accounted_;
  bool interrupted_ = false;
  bool exhausted_ = false;  // ProposeRound found nothing more to do
};

}  // namespace autotune::search
