// The tuning loop of a job: rounds go to tasks as the TaskScheduler decides; each round proposes a
// batch with the task's EvolutionarySearch, builds and measures it (Builder and Runner: local, remote
// or a scripted fake in tests), stores every result in the database in one transaction, updates the
// cost model, and records the best-so-far curve. With `overlap_rounds` the next round is built and
// the one after it proposed while this one is measured. The first batch of a task includes its default
// schedule, so the best found is never slower than the default, and the best schedules of the
// nearest other shapes in the database, replayed on this one. Traces measured on this target in
// any earlier job (the database) are never measured again, so re-running a job resumes it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "db/database.h"
#include "measure/builder.h"
#include "measure/runner.h"
#include "costmodel/cost_model.h"
#include "search/evolutionary_search.h"
#include "search/tune_task.h"
#include "tir/ops/workload.h"

namespace autotune::search {

struct TuneConfig {
  tir::Target target;  // the kind, and the cpu vector registers the rules size register tiles for
  db::TargetInfo target_info;  // how the database names this target (CpuTargetInfo / CudaTargetInfo)
  int trials = 1000;           // measurements in the whole job (all tasks)
  int batch_size = 64;         // measurements per round
  uint64_t seed = 1;
  EvolutionConfig evolution;
  // Propose and build the next rounds while the runner measures this one. Right when the runner's
  // device is not the builder's CPU (a GPU, remote workers); on the cpu target the builds would
  // disturb the kernels being timed.
  bool overlap_rounds = false;
  // With overlap_rounds and a runner that takes one Run at a time (a local GPU): run each candidate
  // as soon as it is built instead of when its round's last compile is done, so the GPU works while
  // a round's slowest kernels still compile.
  bool stream_runs = false;
  // Schedules of other shapes in a task's first round (search/transfer_seeds.h): up to this many of
  // the fastest traces of the nearest shapes of the same operator stored in the database, replayed on
  // the task's shape, for a task with no valid record of its own on this target yet. 0: none.
  int transfer = 16;
  // At the end of a job that was not stopped: each task's fastest few records on this device measured
  // again, back to back, until the fastest this many are all of this job's re-measurements (at most
  // three passes): a first figure that was a lucky outlier does not stay the best. 0: off.
  int remeasure_best = 3;
};

// One record measured again at the end of a job (TuneConfig::remeasure_best).
struct Remeasurement {
  std::string trace_hash;
  double first_ms = 0;  // the stored median before
  double again_ms = 0;  // the new median; 0 when it failed (its error is stored)
  double spread = 0;    // of the new repeats
};

// Per task, what `autotune tune --json` reports.
struct TaskReport {
  TuneTaskSpec spec;
  std::string workload;          // canonical text
  double best_latency_ms = 0;    // 0 when nothing valid was measured
  double best_gflops = 0;
  int trials = 0;                // measured in this job
  int failed = 0;                // of which not valid (any error kind, wrong answers)
  double seconds = 0;            // wall time spent on this task's rounds, of which:
  double search_seconds = 0;     //   proposing candidates (evolutionary search, cost model)
  double build_seconds = 0;      //   lowering and compiling them (with overlapping rounds, also
                                 //   waiting for the compilers an older round still uses)
  double run_seconds = 0;        //   checking and timing them
  double model_seconds = 0;      //   the cost model learning from them (XGBoost retrains on this thread)
  double wait_seconds = 0;       // this thread waiting for a round's measurements: with overlapping
                                 // rounds, the time the build and run stages held the search back
  double build_cpu_seconds = 0;  // CPU time of the compilers (cuda; 0 where not measured)
  double timed_seconds = 0;      // of run_seconds, the warm-up and timed repeats (cuda; 0 where not
                                 // measured): the rest is each candidate's fixed cost
  int cached_builds = 0;         // trials whose kernel was in the build cache (a program measured
                                 // before: of this job, or of an earlier one with the same cache)
  int transferred = 0;           // trials of schedules of other shapes (TuneConfig::transfer)
  std::vector<std::string> transferred_from;  // the shapes they came from (canonical text, nearest first)
  std::string best_trace_json;   // "" when nothing valid
  std::vector<double> curve;     // best-so-far latency (ms) after each measured batch of this job
  std::vector<Remeasurement> remeasured;  // the end of the job's re-measurements, in order
};

// What the loop tells its observer after every batch (progress display, log lines).
struct TuneProgress {
  int task = 0;
  int trials_done = 0;   // in the whole job
  int trials_total = 0;
  double elapsed_s = 0;
  const std::vector<TaskReport>* reports = nullptr;
};

// How many schedules of the tasks' workloads the database holds measurements of on `target`'s device
// (its kind, arch and device; failures included): what `tune --trials N` counts toward N, so a job
// run again after a stop measures only what is missing.
Result<int64_t> StoredTrials(db::TuningDatabase& db, const std::vector<TuneTaskSpec>& tasks,
                             const db::TargetInfo& target);

class Tuner {
 public:
  Tuner(TuneConfig config, measure::Builder& builder, measure::Runner& runner, db::TuningDatabase& db,
        CostModel& model);
  // Tunes the tasks (validated workloads) until the trial budget is spent (a budget of 0 reports the
  // stored best of each task on this device), every task's space is
  // exhausted, or `stop` becomes true (checked between batches: the batch in flight is finished
  // and stored first). Database errors end the job with an error; candidate failures never do.
  Result<std::vector<TaskReport>> Run(const std::vector<TuneTaskSpec>& tasks, const std::atomic<bool>& stop,
                                      const std::function<void(const TuneProgress&)>& on_batch);

 private:
  // One Run's tuning loop, its steps by name (search/tune_job.h).
  class Job;

  // One build per candidate, in order; `on_built` sees each as soon as it is ready (a schedule that
  // does not lower at once).
  std::vector<measure::BuildResult> BuildBatch(const tir::Workload& workload, const std::vector<Candidate>& batch,
                                               const measure::Builder::OnBuilt& on_built = {});
  // TuneConfig::stream_runs: builds `batch` and runs each candidate as soon as it is built, holding
  // `run_mu` for each run; results in batch order (empty when the runner measured nothing of one).
  void BuildAndRunAsBuilt(const tir::Workload& workload, const std::vector<Candidate>& batch, std::mutex& run_mu,
                          std::vector<measure::BuildResult>& builds, std::vector<measure::MeasureResult>& results,
                          double& build_seconds, double& run_seconds);

  TuneConfig config_;
  measure::Builder& builder_;
  measure::Runner& runner_;
  db::TuningDatabase& db_;
  CostModel& model_;
};

}  // namespace autotune::search
