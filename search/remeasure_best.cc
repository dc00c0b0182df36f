// The end of a tuning job: each task's fastest records measured again. A record's figure is the
// median of a few repeats taken once; among thousands of candidates the fastest figure is partly the
// luckiest (a quiet moment, a warm cache), and a user would get a best that the next measurement
// does not reproduce. The contenders measured again back to back, under the same conditions, are
// compared fairly; a pass repeats while the fastest few stored include one not yet re-measured.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <limits>

#include "search/measure_record.h"
#include "search/training_records.h"
#include "search/tune_job.h"

namespace autotune::search {
namespace {

constexpr int kRemeasurePasses = 3;

// The first measurement of a record (kept in the info of its re-measured record): its own, unless it
// was re-measured before and kept one already.
nlohmann::json FirstMeasurement(const db::TuningRecord& old) {
  const auto info = nlohmann::json::parse(old.info_json, nullptr, false);
  if (info.is_object() && info.contains("first_measurement")) return info["first_measurement"];
  return {{"median_ms", old.median_ms}, {"latencies_ms", old.latencies_ms}, {"measured_at", old.measured_at}};
}

}  // namespace

Result<void> Tuner::Job::RemeasureBest() {
  if (config_.remeasure_best <= 0) return {};
  // Every repeat of a contender counts: screening would cut one short after one noisy repeat.
  tuner_.runner_.SetScreening(false);
  struct ScreenAgain {
    measure::Runner& runner;
    ~ScreenAgain() { runner.SetScreening(true); }
  } screen_again{tuner_.runner_};
  for (size_t i = 0; i < states_.size(); ++i) {
    if (!states_[i].started) continue;
    std::unordered_set<std::string> done;
    for (int pass = 0; pass < kRemeasurePasses; ++pass) {
      auto more = RemeasurePass(i, done);
      if (!more) return more.error();
      if (!*more) break;
    }
    if (done.empty()) continue;
    // The best may now be slower than the first figures said: take it afresh from the database.
    states_[i].best_ms = std::numeric_limits<double>::infinity();
    reports_[i].best_latency_ms = reports_[i].best_gflops = 0;
    reports_[i].best_trace_json.clear();
    if (auto r = TakeStoredBestOf(i); !r) return r;
  }
  return {};
}

Result<bool> Tuner::Job::RemeasurePass(size_t i, std::unordered_set<std::string>& done) {
  TaskState& st = states_[i];
  auto stored = tuner_.db_.Best(st.key, query_, 0);  // fastest first
  if (!stored) return MakeError(fmt::format("reading '{}': {}", tuner_.db_.path(), stored.error().message));
  std::vector<db::TuningRecord> olds;
  std::vector<Candidate> batch;
  int contenders = 0;
  for (db::TuningRecord& rec : *stored) {
    if (contenders >= config_.remeasure_best) break;
    if (rec.target.device != config_.target_info.device) continue;
    auto schedule = ReplayStoredTrace(rec.trace_json, st.workload, config_.target);
    if (!schedule) continue;  // no longer a schedule of this version: the lookup skips it too
    ++contenders;
    if (done.count(rec.trace_hash)) continue;
    batch.push_back({std::move(*schedule), rec.trace_hash, 0});
    olds.push_back(std::move(rec));
  }
  if (batch.empty()) return false;
  const std::vector<measure::BuildResult> builds = tuner_.BuildBatch(st.workload, batch);
  const std::vector<measure::MeasureResult> results = tuner_.runner_.Run(st.workload, builds);
  if (results.size() != batch.size()) {
    const std::string why = tuner_.runner_.Unavailable();
    return MakeError(fmt::format("re-measuring the best of {}: {}", reports_[i].workload,
                                 why.empty() ? "the runner returned no result" : why));
  }
  for (size_t k = 0; k < batch.size(); ++k) {
    if (auto r = StoreRemeasurement(st.workload, olds[k], batch[k].schedule, results[k], builds[k]); !r) return r.error();
    done.insert(olds[k].trace_hash);
    const bool valid = Valid(results[k]);
    reports_[i].remeasured.push_back(
        {olds[k].trace_hash, olds[k].median_ms, valid ? results[k].median_ms : 0, valid ? results[k].spread : 0});
  }
  return true;
}

Result<void> Tuner::Job::StoreRemeasurement(const tir::Workload& workload, const db::TuningRecord& old,
                                           const tir::Schedule& schedule, const measure::MeasureResult& r,
                                           const measure::BuildResult& build) {
  db::TuningRecord rec = MakeTuningRecord(workload, schedule.trace(), config_.target_info, r, &build);
  auto info = nlohmann::json::parse(rec.info_json, nullptr, false);
  if (!info.is_object()) info = nlohmann::json::object();
  info["first_measurement"] = FirstMeasurement(old);
  rec.info_json = info.dump();
  db::TuningDatabase& db = tuner_.db_;
  auto replaced = db.ReplaceMeasurement(rec);
  if (!replaced) return replaced.error();
  // Stored under another driver or toolkit of this device: the re-measurement is this target's record.
  if (!*replaced) {
    if (auto stored = db.CommitBatch({rec}); !stored) return stored.error();
  }
  return {};
}

}  // namespace autotune::search
