#include "db/lookup/kernel_lookup.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>

#include "db/database.h"
#include "tir/ops/operator.h"
#include "tir/schedule/replay_on_shape.h"

namespace autotune::db {

struct KernelLookup::Entry {
  LookupStatus status = LookupStatus::kOk;
  LookupAnswer answer;
  std::string message;
};

namespace {

// Failed queries are remembered too (a compiler asks again and again), up to this many distinct ones.
constexpr size_t kMaxCachedFailures = 1 << 16;

Result<tir::Trace> ParseTrace(const TuningRecord& r) {
  auto trace = tir::Trace::FromJsonText(r.trace_json);
  if (!trace) return MakeError(fmt::format("record {}: {}", r.trace_hash.substr(0, 12), trace.error().message));
  return trace;
}

std::unique_ptr<KernelLookup::Entry> Failure(LookupStatus status, std::string message) {
  auto e = std::make_unique<KernelLookup::Entry>();
  e->status = status;
  e->message = std::move(message);
  return e;
}

LookupResult ResultOf(const KernelLookup::Entry& e) {
  if (e.status == LookupStatus::kOk) return LookupResult{e.status, &e.answer, {}};
  return LookupResult{e.status, nullptr, e.message};
}

}  // namespace

KernelLookup::~KernelLookup() = default;

Result<std::unique_ptr<KernelLookup>> KernelLookup::Open(const std::string& db_path) {
  auto db = TuningDatabase::Open(db_path, OpenMode::kReadOnly);
  if (!db) return db.error();
  std::unique_ptr<KernelLookup> lookup(new KernelLookup());
  for (const char* kind : {"cpu", "cuda"}) {
    auto best = (*db)->BestOfEachWorkload("", TargetQuery{kind, ""}, kRecordsPerWorkload);
    if (!best) return best.error();
    for (auto& r : *best) lookup->records_.push_back(std::move(r));
  }
  for (size_t i = 0; i < lookup->records_.size(); ++i) {
    const TuningRecord& r = lookup->records_[i];
    auto& list = lookup->by_workload_[r.workload.key];
    if (list.empty()) lookup->workloads_of_op_[r.workload.op].push_back(r.workload.key);
    list.push_back(i);
  }
  for (auto& [key, list] : lookup->by_workload_) {
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      return lookup->records_[a].median_ms < lookup->records_[b].median_ms;
    });
  }
  return lookup;
}

LookupResult KernelLookup::Find(const LookupQuery& query) {
  // The query text is the cache key; a reused per-thread buffer keeps the hit path allocation-free.
  thread_local std::string key;
  key.clear();
  key.append(query.op).push_back('\x1f');
  key.append(query.shape).push_back('\x1f');
  key.append(query.epilogue).push_back('\x1f');
  key.append(query.dtype).push_back('\x1f');
  key.append(query.target).push_back('\x1f');
  key.push_back(query.nearest ? '1' : '0');
  {
    std::shared_lock lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) return ResultOf(*it->second);
  }
  const std::string query_text = key;
  std::shared_ptr<const Entry> entry = Compute(query);
  std::unique_lock lock(mu_);
  if (entry->status != LookupStatus::kOk) {
    if (cached_failures_ >= kMaxCachedFailures) return ResultOf(*entry);
    ++cached_failures_;
  }
  auto [it, inserted] = cache_.emplace(query_text, std::move(entry));  // raced: the first one stays
  return ResultOf(*it->second);
}

std::shared_ptr<const KernelLookup::Entry> KernelLookup::Compute(const LookupQuery& query) {
  auto target = ParseTargetQuery(std::string(query.target));
  if (!target) return Failure(LookupStatus::kInvalidArgument, target.error().message);
  auto workload = tir::MakeWorkload(std::string(query.op), std::string(query.shape), std::string(query.epilogue),
                                    std::string(query.dtype));
  if (!workload) return Failure(LookupStatus::kInvalidArgument, workload.error().message);
  // Another spelling of the same workload may have been answered already.
  const std::string canonical = workload->Key() + "|" + target->Text() + "|" + (query.nearest ? "1" : "0");
  {
    std::shared_lock lock(mu_);
    if (auto it = canonical_.find(canonical); it != canonical_.end()) return it->second;
  }
  std::shared_ptr<const Entry> entry = Answer(*workload, *target, query.nearest);
  std::unique_lock lock(mu_);
  return canonical_.emplace(canonical, std::move(entry)).first->second;
}

namespace {

// The answer built from record r, replayed as sch on the queried workload w.
std::unique_ptr<KernelLookup::Entry> AnswerFrom(const tir::Workload& w, const TuningRecord& r, const tir::Schedule& sch,
                                                KernelSource source, bool exact) {
  auto e = std::make_unique<KernelLookup::Entry>();
  LookupAnswer& a = e->answer;
  a.kernel = std::move(source);
  a.exact = exact;
  a.requested = w.CanonicalText();
  a.tensors = w.inputs;
  for (const auto& t : w.Outputs()) a.tensors.push_back(t);
  a.num_outputs = static_cast<int>(w.Outputs().size());
  a.measured = r.workload.CanonicalText();
  a.target = r.target.Text();
  a.latency_ms = r.median_ms;
  a.gflops = r.gflops;
  a.estimated_latency_ms = exact || r.gflops <= 0 ? r.median_ms : w.flops / (r.gflops * 1e6);
  a.shape_distance = exact ? 0 : tir::ShapeDistance(w.shape, r.workload.shape);
  a.trace_json = sch.trace().ToJson().dump();
  return e;
}

tir::TargetKind KindOf(const TargetQuery& target) {
  return target.kind == "cuda" ? tir::TargetKind::kCuda : tir::TargetKind::kCpu;
}

}  // namespace

std::shared_ptr<const KernelLookup::Entry> KernelLookup::Answer(const tir::Workload& w, const TargetQuery& target,
                                                                bool nearest) const {
  std::string last_problem;
  if (auto exact = ExactAnswer(w, target, last_problem)) return exact;
  const std::string missing = last_problem.empty()
                                  ? fmt::format("no valid record of {} on {}", w.CanonicalText(), target.Text())
                                  : fmt::format("no usable record of {} on {} (last problem: {})", w.CanonicalText(),
                                                target.Text(), last_problem);
  if (!nearest) return Failure(LookupStatus::kNotFound, missing);
  return NearestAnswer(w, target, missing);
}

// The fastest record of this workload that still replays and generates code; null (and why, in
// last_problem) when none does.
std::unique_ptr<KernelLookup::Entry> KernelLookup::ExactAnswer(const tir::Workload& w, const TargetQuery& target,
                                                               std::string& last_problem) const {
  auto it = by_workload_.find(w.Key());
  if (it == by_workload_.end()) return nullptr;
  for (size_t i : it->second) {
    const TuningRecord& r = records_[i];
    if (!target.Matches(r.target)) continue;
    auto trace = ParseTrace(r);
    if (!trace) {
      last_problem = trace.error().message;
      continue;
    }
    auto sch = tir::Schedule::Replay(w, KindOf(target), *trace);
    if (!sch) {
      last_problem = sch.error().message;
      continue;
    }
    auto source = GenerateKernelSource(*sch);
    if (!source) {
      last_problem = source.error().message;
      continue;
    }
    return AnswerFrom(w, r, *sch, std::move(*source), true);
  }
  return nullptr;
}

// The kNearestShapes other shapes of this operator, epilogue and type that have records on the target,
// nearest first.
std::vector<KernelLookup::Neighbour> KernelLookup::NearestShapes(const tir::Workload& w,
                                                                 const TargetQuery& target) const {
  std::vector<Neighbour> neighbours;
  auto ops = workloads_of_op_.find(w.op);
  if (ops == workloads_of_op_.end()) return neighbours;
  for (const std::string& key : ops->second) {
    const auto& list = by_workload_.at(key);
    const TuningRecord& first = records_[list.front()];
    if (first.workload.epilogue != w.epilogue || first.workload.dtype != w.TypeName() || key == w.Key()) continue;
    const bool on_target =
        std::any_of(list.begin(), list.end(), [&](size_t i) { return target.Matches(records_[i].target); });
    if (on_target) neighbours.push_back({tir::ShapeDistance(w.shape, first.workload.shape), &list});
  }
  std::sort(neighbours.begin(), neighbours.end(),
            [](const Neighbour& a, const Neighbour& b) { return a.distance < b.distance; });
  if (neighbours.size() > kNearestShapes) neighbours.resize(kNearestShapes);
  return neighbours;
}

// Traces of the nearest shapes replayed on this one: the nearest shape that has a trace that applies,
// and among its records the fastest.
std::unique_ptr<KernelLookup::Entry> KernelLookup::NearestAnswer(const tir::Workload& w, const TargetQuery& target,
                                                                 const std::string& missing) const {
  const std::vector<Neighbour> neighbours = NearestShapes(w, target);
  std::unique_ptr<Entry> best;
  int tried = 0;
  for (const Neighbour& n : neighbours) {
    for (size_t i : *n.records) {
      const TuningRecord& r = records_[i];
      if (!target.Matches(r.target)) continue;
      ++tried;
      auto trace = ParseTrace(r);
      if (!trace) continue;
      auto sch = tir::ReplayOnShape(w, KindOf(target), *trace);
      if (!sch) continue;
      auto source = GenerateKernelSource(*sch);
      if (!source) continue;
      if (!best || (n.distance == best->answer.shape_distance && r.gflops > best->answer.gflops)) {
        best = AnswerFrom(w, r, *sch, std::move(*source), false);
      }
    }
    if (best) return best;  // farther shapes are weaker evidence
  }
  if (neighbours.empty()) {
    return Failure(LookupStatus::kNotFound,
                   fmt::format("{}, and no other {} shape with epilogue '{}' has one", missing, w.op, w.epilogue));
  }
  return Failure(LookupStatus::kNotFound,
                 fmt::format("{}; none of the {} traces of the {} nearest shapes applies to this shape", missing, tried,
                             neighbours.size()));
}

}  // namespace autotune::db
