#include "search/training_records.h"

#include <map>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "costmodel/program_features.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/schedule/schedule.h"
#include "support/parallel_for.h"
#include "tir/target.h"

namespace autotune::search {

namespace {

struct PendingRecord {
  const tir::Workload* workload;
  tir::TargetKind target;
  std::string trace_json;
  double median_ms;
  std::string group, group_name;
};

// The features of a stored trace on its workload; empty when it no longer replays or lowers.
std::vector<float> FeaturesOfTrace(const PendingRecord& rec) {
  auto sch = ReplayStoredTrace(rec.trace_json, *rec.workload, rec.target);
  if (!sch) return {};
  auto f = tir::Lower(sch->state(), costmodel::FeatureLowering());
  if (!f) return {};
  return costmodel::ExtractFeatures(*f);
}

}  // namespace

Result<tir::Schedule> ReplayStoredTrace(const std::string& trace_json, const tir::Workload& workload,
                                        tir::Target target) {
  auto trace = tir::Trace::FromJsonText(trace_json);
  if (!trace) return trace.error();
  return tir::Schedule::Replay(workload, target, *trace);
}

Result<costmodel::TrainingSet> ReadTrainingSet(db::TuningDatabase& db, const TrainingFilter& filter, int threads) {
  const auto kind = tir::ParseTargetKind(filter.target.kind);
  if (!kind) return MakeError(fmt::format("unknown target kind '{}'", filter.target.kind));
  costmodel::TrainingSet set;
  // Workloads are rebuilt once each; the pending records point at them.
  std::map<std::string, tir::Workload> workloads;
  std::vector<PendingRecord> pending;
  auto read = db.ForEachRecord([&](const db::TuningRecord& rec) {
    if (!filter.target.Matches(rec.target)) return true;
    if (!filter.op.empty() && rec.workload.op != filter.op) return true;
    if (filter.leave_out.count(rec.workload.key)) return true;
    if (!rec.valid() || !(rec.median_ms > 0)) {
      ++set.invalid_records;
      return true;
    }
    auto it = workloads.find(rec.workload.key);
    if (it == workloads.end()) {
      auto w = tir::MakeWorkload(rec.workload.op, rec.workload.ShapeText(), rec.workload.epilogue, rec.workload.dtype);
      if (!w) {
        ++set.stale_records;  // an operator or shape this version no longer knows
        return true;
      }
      it = workloads.emplace(rec.workload.key, std::move(w).value()).first;
    }
    pending.push_back(PendingRecord{&it->second, *kind, rec.trace_json, rec.median_ms,
                                    rec.workload.key + "@" + rec.target.device,
                                    fmt::format("{} on {}", rec.workload.CanonicalText(), rec.target.device)});
    return true;
  });
  if (!read) return MakeError(fmt::format("reading '{}': {}", db.path(), read.error().message));

  std::vector<std::vector<float>> features(pending.size());
  ParallelFor(std::max(1, threads), pending.size(), [&](size_t i) { features[i] = FeaturesOfTrace(pending[i]); });
  for (size_t i = 0; i < pending.size(); ++i) {
    if (features[i].empty()) {
      ++set.stale_records;
      continue;
    }
    set.rows.push_back(std::move(features[i]));
    set.latencies_ms.push_back(pending[i].median_ms);
    set.groups.push_back(std::move(pending[i].group));
    set.group_names.push_back(std::move(pending[i].group_name));
  }
  return set;
}

}  // namespace autotune::search
