#include "search/tuner.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <utility>

#include "search/tune_job.h"
#include "support/stopwatch.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"

namespace autotune::search {

namespace {

using Clock = std::chrono::steady_clock;

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
      run_seconds += SecondsSince(run_start);
      if (one.empty()) {
        unmeasured = true;
      } else {
        results[next->first] = std::move(one.front());
      }
    }
  });
  const auto build_start = Clock::now();
  builds = BuildBatch(workload, batch, [&](size_t k, const measure::BuildResult& b) { ready.Push(k, b); });
  build_seconds = SecondsSince(build_start);
  ready.Close();
  runs.join();
  // A round with a candidate the runner did not measure counts as not measured at all, like a batch
  // Run that returns nothing: never stored with an empty result.
  if (unmeasured) results.clear();
}

Result<int64_t> StoredTrials(db::TuningDatabase& db, const std::vector<TuneTaskSpec>& tasks,
                             const db::TargetInfo& target) {
  std::unordered_set<std::string> counted;  // a workload listed twice counts once
  int64_t stored = 0;
  for (const TuneTaskSpec& spec : tasks) {
    auto w = WorkloadOf(spec);
    if (!w) return MakeError(fmt::format("{} {}: {}", spec.op, spec.shape, w.error().message));
    if (!counted.insert(w->Key()).second) continue;
    auto measured = db.MeasuredTraceHashes(w->Key(), target);
    if (!measured) return MakeError(fmt::format("reading '{}': {}", db.path(), measured.error().message));
    stored += static_cast<int64_t>(measured->size());
  }
  return stored;
}

Tuner::Tuner(TuneConfig config, measure::Builder& builder, measure::Runner& runner, db::TuningDatabase& db,
             CostModel& model)
    : config_(std::move(config)), builder_(builder), runner_(runner), db_(db), model_(model) {}

Result<std::vector<TaskReport>> Tuner::Run(const std::vector<TuneTaskSpec>& tasks, const std::atomic<bool>& stop,
                                           const std::function<void(const TuneProgress&)>& on_batch) {
  Job job(*this, tasks, stop, on_batch);
  return job.Run();
}

}  // namespace autotune::search
