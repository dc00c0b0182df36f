#include "search/evolutionary_search.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>

#include "db/record.h"
#include "search/crossover.h"
#include "search/default_schedule.h"
#include "search/mutation.h"
#include "tir/analysis/gpu_validity.h"
#include "tir/check.h"
#include "tir/lower/lower.h"

namespace autotune::search {

namespace {

// Sampling or breeding stops when this many attempts in a row give only duplicates (which cost no
// lowering, the hash is checked first): a small schedule space is exhausted long before the attempt
// bound of a large population. Invalid candidates do not count: they say nothing about exhaustion
// (most random cuda samples of a large gemm exceed a GPU limit), only the attempt bound stops them.
constexpr int kMaxFruitlessAttempts = 256;

// Attempts to fill a population of `population` (or to breed as many children).
int AttemptBound(int population) { return 4 * population + 64; }

// A valid candidate: its schedule and its trace hash.
struct Member {
  tir::Schedule schedule;
  std::string hash;
};

// What one NextBatch has seen: every trace hash tried (valid or not, so nothing is lowered twice) and
// every valid candidate, kept as compact trace JSON (a schedule state is much larger) for the
// epsilon-greedy picks.
class Pool {
 public:
  Pool(const tir::Workload& workload, tir::TargetKind target, EvolutionarySearch::Stats& stats)
      : workload_(workload), target_(target), stats_(stats) {}

  bool Seen(const std::string& hash) const { return seen_.count(hash) > 0; }

  // Replays `trace` (whose hash is `hash`) and admits it if it is new and valid.
  std::optional<Member> AdmitTrace(const tir::Trace& trace, const std::string& hash) {
    if (Seen(hash)) return std::nullopt;
    auto sch = tir::Schedule::Replay(workload_, target_, trace);
    if (!sch) {
      seen_.insert(hash);
      ++stats_.invalid;
      return std::nullopt;
    }
    auto json = sch->trace().ToJson().dump();
    auto replayed_hash = db::HashTraceJson(json);
    auto member = Admit(std::move(*sch), std::move(json), std::move(replayed_hash));
    seen_.insert(hash);  // a no-op unless replay normalized the trace
    return member;
  }

  // Admits a schedule of this workload and target, whose trace has this compact JSON and hash, if
  // it is new and valid.
  std::optional<Member> Admit(tir::Schedule sch, std::string json, std::string hash) {
    if (!seen_.insert(hash).second) return std::nullopt;
    if (!Valid(sch)) {
      ++stats_.invalid;
      return std::nullopt;
    }
    archive_.push_back({std::move(json), hash});
    return Member{std::move(sch), std::move(hash)};
  }

  struct Entry {
    std::string trace_json;
    std::string hash;
  };
  // Every valid candidate, in the order found.
  const std::vector<Entry>& archive() const { return archive_; }

 private:
  // Lowering is what makes the search expensive; the GPU check is cheap after it.
  bool Valid(const tir::Schedule& sch) const {
    auto f = tir::Lower(sch.state());
    if (!f) return false;
    if (target_ == tir::TargetKind::kCuda && !tir::CheckGpuValidity(*f)) return false;
    return true;
  }

  const tir::Workload& workload_;
  tir::TargetKind target_;
  EvolutionarySearch::Stats& stats_;
  std::unordered_set<std::string> seen_;  // membership only: never iterated
  std::vector<Entry> archive_;
};

std::string HashOf(const tir::Trace& trace) { return db::HashTraceJson(trace.ToJson().dump()); }

// Scores `members` with one model call; a non-finite score ranks last.
std::vector<double> Score(CostModel& model, const tir::Workload& workload, const std::vector<Member>& members) {
  std::vector<const tir::Schedule*> ptrs;
  ptrs.reserve(members.size());
  for (const auto& m : members) ptrs.push_back(&m.schedule);
  std::vector<double> scores = members.empty() ? std::vector<double>{} : model.Predict(workload, ptrs);
  AUTOTUNE_CHECK(scores.size() == members.size(), "a cost model must return one score per candidate");
  for (double& s : scores) {
    if (!std::isfinite(s)) s = -std::numeric_limits<double>::infinity();
  }
  return scores;
}

// Sorts members (and their scores) best first; ties keep their order, so the result is deterministic.
void SortByScore(std::vector<Member>& members, std::vector<double>& scores) {
  std::vector<size_t> order(members.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  std::vector<Member> m;
  std::vector<double> s;
  m.reserve(order.size());
  s.reserve(order.size());
  for (size_t i : order) {
    m.push_back(std::move(members[i]));
    s.push_back(scores[i]);
  }
  members = std::move(m);
  scores = std::move(s);
}

// Selection weights: the scores shifted so that the worst is 0 (all zero: uniform).
std::vector<double> SelectionWeights(const std::vector<double>& scores) {
  double lo = std::numeric_limits<double>::infinity();
  for (double s : scores) {
    if (std::isfinite(s)) lo = std::min(lo, s);
  }
  std::vector<double> w(scores.size(), 0.0);
  for (size_t i = 0; i < scores.size(); ++i) {
    if (std::isfinite(scores[i])) w[i] = scores[i] - lo;
  }
  return w;
}

// A parent other than `first`, by weight (uniform among the others when they all weigh nothing).
size_t PickOther(const std::vector<double>& weights, size_t first, Random& rng) {
  std::vector<double> w = weights;
  w[first] = 0;
  double total = 0;
  for (double x : w) total += x;
  if (total > 0) return static_cast<size_t>(rng.Categorical(w));
  const auto n = static_cast<int64_t>(weights.size());
  return static_cast<size_t>((static_cast<int64_t>(first) + 1 + rng.UniformInt(0, n - 2)) % n);
}

}  // namespace

EvolutionarySearch::EvolutionarySearch(const tir::Workload& workload, tir::TargetKind target, EvolutionConfig config,
                                       uint64_t seed)
    : workload_(workload), target_(target), config_(config), rng_(seed) {}

std::vector<Candidate> EvolutionarySearch::NextBatch(int n, CostModel& model,
                                                     const std::unordered_set<std::string>& measured,
                                                     const std::vector<tir::Schedule>& best_measured) {
  if (n <= 0) return {};
  const size_t population = static_cast<size_t>(std::max(1, config_.population));
  Pool pool(workload_, target_, stats_);

  // Initial population: the best measured schedules (replayed here, so they are schedules of this
  // workload and target whatever their origin), then fresh samples of the template.
  std::vector<Member> members;
  const size_t from_measured =
      std::min(best_measured.size(), static_cast<size_t>(std::max(0, config_.seeds_from_measured)));
  for (size_t i = 0; i < from_measured && members.size() < population; ++i) {
    const tir::Trace& t = best_measured[i].trace();
    if (auto m = pool.AdmitTrace(t, HashOf(t))) members.push_back(std::move(*m));
  }
  for (int attempts = 0, fruitless = 0; members.size() < population &&
                                        attempts < AttemptBound(static_cast<int>(population)) &&
                                        fruitless < kMaxFruitlessAttempts;
       ++attempts) {
    auto sch = RandomSchedule(workload_, target_, rng_.Next());
    ++stats_.sampled;
    if (!sch) {
      ++stats_.invalid;
      continue;
    }
    auto json = sch->trace().ToJson().dump();
    auto hash = db::HashTraceJson(json);
    if (pool.Seen(hash)) {
      ++fruitless;
      continue;
    }
    fruitless = 0;
    if (auto m = pool.Admit(std::move(*sch), std::move(json), std::move(hash))) members.push_back(std::move(*m));
  }

  // `members` stays sorted best first; its first `population` are the parents of a generation.
  std::vector<double> scores = Score(model, workload_, members);
  SortByScore(members, scores);
  for (int g = 0; g < config_.generations && !members.empty(); ++g) {
    if (members.size() > population) {
      members.erase(members.begin() + static_cast<std::ptrdiff_t>(population), members.end());
      scores.erase(scores.begin() + static_cast<std::ptrdiff_t>(population), scores.end());
    }
    const std::vector<double> weights = SelectionWeights(scores);
    std::vector<Member> children;
    for (int attempts = 0, fruitless = 0; children.size() < population &&
                                          attempts < AttemptBound(static_cast<int>(population)) &&
                                          fruitless < kMaxFruitlessAttempts;
         ++attempts) {
      const auto first = static_cast<size_t>(rng_.Categorical(weights));
      tir::Trace trace = members[first].schedule.trace();
      bool crossed = false, mutated = false;
      if (members.size() >= 2 && rng_.UniformReal() < config_.crossover_prob) {
        const size_t second = PickOther(weights, first, rng_);
        if (auto child = Crossover(trace, members[second].schedule.trace(), rng_)) {
          trace = std::move(*child);
          crossed = true;
        }
      }
      if (rng_.UniformReal() < config_.mutation_prob) {
        if (auto child = BuiltinMutators().Mutate(trace, rng_)) {
          trace = std::move(*child);
          mutated = true;
        }
      }
      // A plain copy adds nothing: the parent itself competes in the next selection.
      const std::string hash = (crossed || mutated) ? HashOf(trace) : std::string();
      if (hash.empty() || pool.Seen(hash)) {
        ++fruitless;
        continue;
      }
      fruitless = 0;
      stats_.crossed += crossed;
      stats_.mutated += mutated;
      if (auto m = pool.AdmitTrace(trace, hash)) children.push_back(std::move(*m));
    }
    // Parents and children are scored in one call (scores are comparable within a call only).
    for (auto& c : children) members.push_back(std::move(c));
    scores = Score(model, workload_, members);
    SortByScore(members, scores);
  }

  // The batch: the best-scored unmeasured candidates of the last generation (parents and children),
  // then an epsilon-greedy share drawn uniformly from every other valid unmeasured candidate seen in
  // this call (all generations); fresh samples fill up what is still missing.
  int n_random = 0;
  if (config_.eps_greedy > 0) {
    n_random = static_cast<int>(std::llround(config_.eps_greedy * n));
    if (n >= 2) n_random = std::max(n_random, 1);
    n_random = std::min(n_random, n);
  }
  std::vector<Candidate> batch;
  std::unordered_set<std::string> chosen;  // membership only
  for (size_t i = 0; i < members.size() && static_cast<int>(batch.size()) < n - n_random; ++i) {
    const std::string& h = members[i].hash;
    if (measured.count(h) || !chosen.insert(h).second) continue;
    batch.push_back({members[i].schedule, h, scores[i]});
  }
  std::vector<size_t> rest;  // archive order: deterministic
  for (size_t i = 0; i < pool.archive().size(); ++i) {
    const std::string& h = pool.archive()[i].hash;
    if (!measured.count(h) && !chosen.count(h)) rest.push_back(i);
  }
  // Partial Fisher-Yates: the first `k` of `rest` become a uniform sample without replacement.
  const size_t k = std::min(rest.size(), static_cast<size_t>(n) - batch.size());
  for (size_t j = 0; j < k; ++j) {
    std::swap(rest[j], rest[rng_.UniformInt(static_cast<int64_t>(j), static_cast<int64_t>(rest.size()) - 1)]);
    const auto& e = pool.archive()[rest[j]];
    auto trace = tir::Trace::FromJson(nlohmann::json::parse(e.trace_json));
    AUTOTUNE_CHECK(trace.ok(), "an archived trace must parse");
    auto sch = tir::Schedule::Replay(workload_, target_, *trace);
    AUTOTUNE_CHECK(sch.ok(), "an archived candidate must replay as it did before");
    batch.push_back({std::move(*sch), e.hash, 0.0});
  }
  // Still short: the population held too few unmeasured candidates (a small space, most of it
  // measured). Fresh samples, checked against `measured` before they are lowered, find the rest;
  // the bounds make an exhausted space cost a bounded number of cheap draws, never a hang.
  const int fill_attempts = 4 * (n + static_cast<int>(population)) + 4 * kMaxFruitlessAttempts;
  for (int attempts = 0, fruitless = 0; static_cast<int>(batch.size()) < n && attempts < fill_attempts &&
                                        fruitless < 4 * kMaxFruitlessAttempts;
       ++attempts) {
    auto sch = RandomSchedule(workload_, target_, rng_.Next());
    ++stats_.sampled;
    if (!sch) {
      ++stats_.invalid;
      continue;
    }
    auto json = sch->trace().ToJson().dump();
    auto hash = db::HashTraceJson(json);
    if (measured.count(hash) || pool.Seen(hash)) {
      ++fruitless;
      continue;
    }
    fruitless = 0;
    if (auto m = pool.Admit(std::move(*sch), std::move(json), std::move(hash))) {
      batch.push_back({std::move(m->schedule), m->hash, 0.0});
    }
  }
  return batch;
}

}  // namespace autotune::search
