#include "search/evolutionary_search.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "costmodel/program_features.h"
#include "search/crossover.h"
#include "search/default_schedule.h"
#include "search/measure_record.h"
#include "search/mutation.h"
#include "search/thread_workload.h"
#include "tir/analysis/gpu_validity.h"
#include "support/check.h"
#include "tir/functor.h"
#include "tir/lower/lower.h"
#include "tir/structural_equal.h"
#include "support/parallel_for.h"

namespace autotune::search {

// Outside the anonymous namespace: the nested types of EvolutionarySearch hold it.
namespace detail {

// A valid candidate: its schedule, its trace hash, the hash of its lowered program (two traces may
// lower to the same program), the cost model's summary of that program and its family.
struct Member {
  tir::Schedule schedule;
  std::string hash;
  size_t code_hash = 0;
  std::vector<float> summary;
  size_t family = 0;  // FamilyOf the lowered function
  size_t sketch = 0;  // StructureHash of its trace: its sketch
};
}  // namespace detail

namespace {

// Sampling or breeding stops when this many attempts in a row give only duplicates (which cost no
// lowering, the hash is checked first): a small schedule space is exhausted long before the attempt
// bound of a large population. Invalid candidates do not count: they say nothing about exhaustion
// (most random cuda samples of a large gemm exceed a GPU limit), only the attempt bound stops them.
constexpr int kMaxFruitlessAttempts = 256;

// Attempts to fill a population of `population` (or to breed as many children).
int AttemptBound(int population) { return 4 * population + 64; }

// The threads to use for a configured count (0: one per hardware thread).
int ThreadCount(int configured) {
  if (configured > 0) return configured;
  return UsableCores();
}


// Candidates handled per parallel step: enough to keep every thread busy, and only a few per thread
// beyond what is still needed, since those past the point where a one-at-a-time loop would have
// stopped are computed and then dropped.
int ChunkSize(size_t needed, int attempts_left, int threads) {
  const auto t = static_cast<size_t>(threads);
  return static_cast<int>(std::min(static_cast<size_t>(attempts_left), std::clamp(needed, 4 * t, 64 * t)));
}

// The program as the code generators see it: lowering has applied each loop's auto_unroll_max_step
// (unroll_loops marks the loops it unrolls) and nothing reads it after, so two depths that unroll
// the same loops make the same program.
class ForgetUnrollDepth : public tir::IRMutator {
 public:
  tir::Stmt Mutate_(const tir::ForNode* op, const tir::Stmt& self) override {
    const tir::Stmt s = MutateFields(op, self);
    const auto* f = tir::As<tir::ForNode>(s);
    if (f->auto_unroll_max_step == 0) return s;
    return tir::For(f->var, f->min, f->extent, f->for_kind, f->body, f->tag, 0);
  }
};

// The GPU's limits as the search checks candidates: the defaults, with its cap on unrolled code.
tir::GpuLimits SearchLimits(const EvolutionConfig& config) {
  tir::GpuLimits limits;
  limits.max_unrolled_statements = config.max_unrolled_statements;
  return limits;
}

// A schedule as the search admits it: lowered, and on cuda within `limits` (its usage with it).
struct CheckedProgram {
  tir::PrimFunc func;
  std::optional<tir::GpuUsage> usage;  // cuda only
};
std::optional<CheckedProgram> LowerAndCheck(const tir::Schedule& sch, tir::TargetKind target,
                                            const tir::GpuLimits& limits) {
  auto f = tir::Lower(sch.state(), costmodel::FeatureLowering());
  if (!f) return std::nullopt;
  CheckedProgram out{std::move(*f), std::nullopt};
  if (target == tir::TargetKind::kCuda) {
    auto usage = tir::CheckGpuValidity(out.func, limits);
    if (!usage) return std::nullopt;
    out.usage = *usage;
  }
  return out;
}

// Equal for two lowered functions that generate the same code (a 64-bit hash: a collision, which
// would drop one distinct candidate, is not worth a guard).
size_t ProgramHash(const tir::PrimFunc& f) { return tir::StructuralHash(ForgetUnrollDepth().Mutate(f.body)); }

// Candidates of one family (EvolutionConfig::max_per_family) share threads per block, shared memory
// and local arrays: their block shape and tiles.
size_t FamilyOf(const tir::GpuUsage& u) {
  size_t h = std::hash<int64_t>()(u.threads_per_block);
  h = h * 1000003u ^ std::hash<int64_t>()(u.shared_bytes);
  h = h * 1000003u ^ std::hash<int64_t>()(u.local_bytes_per_thread);
  return h * 1000003u ^ std::hash<int>()(u.kernels);
}

using detail::Member;

// A trace to replay, its compact JSON and its hash (empty: nothing to try, a plain copy of a parent,
// which keeps no trace), with how it was bred.
struct Proposal {
  tir::Trace trace;
  std::string json, hash;
  bool crossed = false;
  bool mutated = false;
};

// A proposal of `trace`: its JSON and hash made once, since replay mostly records the same trace.
Proposal ProposalOf(tir::Trace trace) {
  Proposal p;
  TraceIdentity id = IdentityOf(trace);
  p.json = std::move(id.json);
  p.hash = std::move(id.hash);
  p.trace = std::move(trace);
  return p;
}

// Whether two JSON values are the same value of the same type, so that they print alike (for
// nlohmann's ==, 1 equals 1.0 and 0.0 equals -0.0).
bool Identical(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_number_float()) {
    const double x = a.get<double>(), y = b.get<double>();
    return x == y && std::signbit(x) == std::signbit(y);
  }
  if (a.is_array()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Identical(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y) {
      if (x.key() != y.key() || !Identical(x.value(), y.value())) return false;
    }
    return true;
  }
  return a == b;
}

// Whether two traces have the same JSON (what Trace::ToJson writes), without writing it.
bool SameJson(const tir::Trace& a, const tir::Trace& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const tir::Instruction& x = a.instructions()[i];
    const tir::Instruction& y = b.instructions()[i];
    if (x.kind != y.kind || x.outputs != y.outputs || !Identical(x.inputs, y.inputs) || !Identical(x.attrs, y.attrs) ||
        !Identical(x.decision, y.decision)) {
      return false;
    }
  }
  return true;
}

// The pure, expensive part of admitting a candidate, computed ahead on any thread: whether it
// replays (or was sampled) and its schedule, trace JSON and hash, and whether it lowers and passes
// the checks (unset: not computed, Admit computes it if it needs it).
struct Prepared {
  bool done = false;      // replay (or sampling) was tried
  bool replayed = false;  // it gave a schedule (`hash` is its trace's)
  std::optional<tir::Schedule> schedule;  // unset when it did not replay, or was found invalid
  std::string json, hash;
  std::optional<bool> valid;
  std::vector<float> summary;  // the cost model's, made when `valid` was computed
  size_t code_hash = 0;        // ProgramHash of the lowered function, made with `summary`
  size_t family = 0;           // FamilyOf the lowered function
  size_t sketch = 0;           // StructureHash of the trace, made with `summary`
};

// Frees items[from..] on the worker threads, then drops them: a schedule is thousands of small
// allocations, and freeing the dropped half of every generation was a good part of the search's
// serial time on the calling thread.
template <class T>
void FreeInParallel(std::vector<T>& items, size_t from, int threads) {
  if (from >= items.size()) return;
  ParallelFor(threads, items.size() - from, [&](size_t j) { T dead = std::move(items[from + j]); });
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(from), items.end());
}

// Scores `members` with one model call; a non-finite score ranks last.
std::vector<double> Score(CostModel& model, const tir::Workload& workload, const std::vector<Member>& members) {
  std::vector<const tir::Schedule*> ptrs;
  std::vector<std::vector<float>> summaries;
  ptrs.reserve(members.size());
  summaries.reserve(members.size());
  for (const auto& m : members) {
    ptrs.push_back(&m.schedule);
    summaries.push_back(m.summary);
  }
  std::vector<double> scores =
      members.empty() ? std::vector<double>{} : model.PredictSummarized(workload, ptrs, summaries);
  AUTOTUNE_CHECK(scores.size() == members.size(), "a cost model must return one score per candidate");
  for (double& s : scores) {
    if (!std::isfinite(s)) s = -std::numeric_limits<double>::infinity();
  }
  return scores;
}

// Puts members (and their scores) in the order of `order` (indices into them).
void Reorder(std::vector<Member>& members, std::vector<double>& scores, const std::vector<size_t>& order) {
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

// Sorts members (and their scores) best first; ties keep their order, so the result is deterministic.
void SortByScore(std::vector<Member>& members, std::vector<double>& scores) {
  std::vector<size_t> order(members.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  Reorder(members, scores, order);
}

// The parents of the next generation, given `members` sorted best first: the best `population`, except
// that the best `per_sketch` of every sketch are kept even below that cut (in place of the last
// above it), so that a sketch the model scores low still breeds (EvolutionConfig::min_per_sketch).
// Moves them to the front, still in score order; returns how many.
size_t KeepBestOfEachSketch(std::vector<Member>& members, std::vector<double>& scores, size_t population,
                            int per_sketch) {
  if (per_sketch <= 0 || members.size() <= population) return std::min(population, members.size());
  std::vector<char> keep(members.size(), 0);
  std::unordered_map<size_t, int> taken;
  size_t kept = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    if (taken[members[i].sketch]++ < per_sketch) keep[i] = 1, ++kept;
  }
  for (size_t i = 0; i < members.size() && kept < population; ++i) {
    if (!keep[i]) keep[i] = 1, ++kept;
  }
  std::vector<size_t> order;  // the kept ones first, in score order; then the rest
  order.reserve(members.size());
  for (int pass = 1; pass >= 0; --pass) {
    for (size_t i = 0; i < members.size(); ++i) {
      if (keep[i] == pass) order.push_back(i);
    }
  }
  Reorder(members, scores, order);
  return kept;
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

// One child: a parent by weight, maybe crossover with a second, maybe a mutation, and its hash; `rng`
// is the child's own engine. A plain copy keeps no trace and gets no hash: it adds nothing, the parent
// itself competes in the next selection. Pure apart from `rng`: runs on any thread.
Proposal Breed(const std::vector<Member>& parents, const std::vector<double>& weights, const EvolutionConfig& config,
               Random& rng) {
  const auto first = static_cast<size_t>(rng.Categorical(weights));
  const tir::Trace& parent = parents[first].schedule.trace();
  std::optional<tir::Trace> child;
  bool crossed = false, mutated = false;
  if (parents.size() >= 2 && rng.UniformReal() < config.crossover_prob) {
    const size_t second = PickOther(weights, first, rng);
    child = Crossover(parent, parents[second].schedule.trace(), rng);
    crossed = child.has_value();
  }
  if (rng.UniformReal() < config.mutation_prob) {
    if (auto mutant = BuiltinMutators().Mutate(child ? *child : parent, rng)) {
      child = std::move(mutant);
      mutated = true;
    }
  }
  Proposal p = child ? ProposalOf(std::move(*child)) : Proposal{};
  p.crossed = crossed;
  p.mutated = mutated;
  return p;
}

// The epsilon-greedy share of a batch of `n`: at least one of a batch of two or more when on.
int EpsilonGreedyCount(int n, double eps_greedy) {
  if (eps_greedy <= 0) return 0;
  int n_random = static_cast<int>(std::llround(eps_greedy * n));
  if (n >= 2) n_random = std::max(n_random, 1);
  return std::min(n_random, n);
}

}  // namespace

// What one NextBatch has seen: every trace hash tried (valid or not, so nothing is lowered twice) and
// every valid candidate, kept as compact trace JSON (a schedule state is much larger) for the
// epsilon-greedy picks. The seen set, the archive and the stats change on the calling thread only,
// in candidate order; the Prepare functions compute ahead, in parallel, what admitting needs.
class EvolutionarySearch::Pool {
 public:
  Pool(const tir::Workload& workload, tir::Target target, int threads, const CostModel& model,
       const EvolutionConfig& config, EvolutionarySearch::Stats& stats)
      : workload_(workload),
        target_(target),
        threads_(threads),
        model_(model),
        limits_(SearchLimits(config)),
        distinct_programs_(config.distinct_programs),
        sketches_(config.sketches),
        stats_(stats) {}

  int threads() const { return threads_; }
  bool Seen(const std::string& hash) const { return seen_.count(hash) > 0; }

  // Replays, lowers and checks in parallel the proposals that admitting them in order may need:
  // those with a hash not seen yet, first occurrences; the others are left not done. A proposal is
  // lowered on the thread that replayed it, so the schedule's nodes (and its thread's copy of the
  // workload, ThreadWorkload) are touched by one thread, not bounced between cores. (Two proposals
  // that replay to the same trace are then both checked: rare, and the results are the same.)
  std::vector<Prepared> PrepareTraces(const std::vector<Proposal>& proposals) const {
    std::vector<Prepared> out(proposals.size());
    std::vector<size_t> to_replay;
    std::unordered_set<std::string> firsts;  // membership only
    for (size_t i = 0; i < proposals.size(); ++i) {
      const std::string& h = proposals[i].hash;
      if (!h.empty() && !Seen(h) && firsts.insert(h).second) to_replay.push_back(i);
    }
    ParallelFor(threads_, to_replay.size(), [&](size_t j) {
      Prepared& p = out[to_replay[j]];
      p = PrepareReplay(proposals[to_replay[j]]);
      if (p.replayed && !Seen(p.hash)) CheckOne(p);
    });
    return out;
  }

  // Samples the template from each seed in parallel, and lowers and checks those that admitting them
  // in order will check: valid samples whose hash is neither seen nor `known`, first occurrences.
  // Each sample is lowered on the thread that drew it (as in PrepareTraces); of samples with the
  // same hash the first to claim it is checked, and its result is copied to the first in order.
  // `known` is called on the worker threads: it may only read.
  std::vector<Prepared> PrepareSamples(const std::vector<uint64_t>& seeds,
                                       const std::function<bool(const std::string&)>& known) const {
    std::vector<Prepared> out(seeds.size());
    std::mutex mu;
    std::unordered_set<std::string> claimed;  // membership only
    ParallelFor(threads_, seeds.size(), [&](size_t i) {
      Prepared& p = out[i];
      p = Prepare(RandomSchedule(ThreadWorkload(workload_), target_, seeds[i], sketches_));
      if (!p.replayed || known(p.hash) || Seen(p.hash)) return;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!claimed.insert(p.hash).second) return;
      }
      CheckOne(p);
    });
    std::unordered_map<std::string, size_t> first;  // a checked hash's first sample in order
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].replayed) first.try_emplace(out[i].hash, i);
    }
    for (Prepared& p : out) {
      if (!p.valid) continue;
      Prepared& f = out[first.at(p.hash)];
      if (&f != &p) CopyCheck(p, f);
    }
    return out;
  }

  // Replays the proposal's trace (`p` is what PrepareTraces computed for it, maybe nothing) and
  // admits it if it is new and valid.
  std::optional<Member> AdmitTrace(const Proposal& proposal, Prepared p) {
    const std::string& hash = proposal.hash;
    if (Seen(hash)) return std::nullopt;
    if (!p.done) p = PrepareReplay(proposal);
    if (!p.replayed) {
      seen_.insert(hash);
      ++stats_.invalid;
      return std::nullopt;
    }
    auto member = Admit(std::move(p));
    seen_.insert(hash);  // a no-op unless replay normalized the trace
    return member;
  }

  // Admits a replayed or sampled schedule of this workload and target if it is new and valid
  // (checked here unless that was done ahead), and its program is not one admitted before: a trace
  // that differs from another only in decisions that leave the program alone (e.g. an unroll depth
  // above the loops' extents) would get its twin's score and be measured again for nothing.
  std::optional<Member> Admit(Prepared p) {
    if (!seen_.insert(p.hash).second) return std::nullopt;
    if (!p.valid) p.valid = Valid(*p.schedule, p);
    if (!*p.valid) {
      ++stats_.invalid;
      return std::nullopt;
    }
    if (distinct_programs_ && !programs_.insert(p.code_hash).second) {
      ++stats_.same_program;
      return std::nullopt;
    }
    archive_.push_back({std::move(p.json), p.hash, p.code_hash});
    return Member{std::move(*p.schedule), std::move(p.hash), p.code_hash, std::move(p.summary), p.family, p.sketch};
  }

  // Fresh samples until `want` are admitted (each goes to `take`), `max_attempts` were drawn, or
  // `max_fruitless` in a row were duplicates (seen, or `known`). Exactly what a one-sample-at-a-time
  // loop does, a chunk at a time: the chunk's seeds are drawn first, sampled and checked in parallel,
  // merged in order up to where that loop would stop, and `rng` is left where that loop leaves it.
  void SampleFresh(Random& rng, size_t want, int max_attempts, int max_fruitless,
                   const std::function<bool(const std::string&)>& known, const std::function<void(Member)>& take) {
    size_t taken = 0;
    for (int attempts = 0, fruitless = 0; taken < want && attempts < max_attempts && fruitless < max_fruitless;) {
      Random ahead = rng;
      std::vector<uint64_t> seeds(static_cast<size_t>(ChunkSize(want - taken, max_attempts - attempts, threads_)));
      for (uint64_t& seed : seeds) seed = ahead.Next();
      std::vector<Prepared> prepared = PrepareSamples(seeds, known);
      size_t used = 0;
      for (; used < seeds.size() && taken < want && fruitless < max_fruitless; ++used) {
        Prepared& p = prepared[used];
        ++stats_.sampled;
        if (!p.replayed) {
          ++stats_.invalid;
          continue;
        }
        if (known(p.hash) || Seen(p.hash)) {
          ++fruitless;
          continue;
        }
        fruitless = 0;
        if (auto m = Admit(std::move(p))) {
          take(std::move(*m));
          ++taken;
        }
      }
      attempts += static_cast<int>(used);
      for (size_t i = 0; i < used; ++i) rng.Next();
      FreeInParallel(prepared, 0, threads_);
    }
  }

  struct Entry {
    std::string trace_json;
    std::string hash;
    size_t code_hash = 0;
  };
  // Every valid candidate, in the order found.
  const std::vector<Entry>& archive() const { return archive_; }

 private:
  // A sampled or replayed schedule, its trace JSON and hash (pure: runs on any thread).
  static Prepared Prepare(Result<tir::Schedule> sch) {
    Prepared p;
    p.done = true;
    if (sch) {
      p.replayed = true;
      TraceIdentity id = IdentityOf(sch->trace());
      p.json = std::move(id.json);
      p.hash = std::move(id.hash);
      p.schedule = std::move(*sch);
    }
    return p;
  }

  // The proposal's trace replayed; the proposal's JSON and hash are the schedule's unless replay
  // recorded another trace (pure: runs on any thread).
  Prepared PrepareReplay(const Proposal& proposal) const {
    auto sch = tir::Schedule::Replay(ThreadWorkload(workload_), target_, proposal.trace);
    if (!sch || !SameJson(sch->trace(), proposal.trace)) return Prepare(std::move(sch));
    Prepared p;
    p.done = true;
    p.replayed = true;
    p.json = proposal.json;
    p.hash = proposal.hash;
    p.schedule = std::move(*sch);
    return p;
  }

  // Checks `p`; an invalid schedule is freed there too.
  void CheckOne(Prepared& p) const {
    p.valid = Valid(*p.schedule, p);
    if (!*p.valid) p.schedule.reset();
  }
  // Gives `to` (a schedule of the same trace) what checking `from` found.
  static void CopyCheck(const Prepared& from, Prepared& to) {
    to.valid = from.valid;
    to.summary = from.summary;
    to.code_hash = from.code_hash;
    to.family = from.family;
    to.sketch = from.sketch;
    if (!*to.valid) to.schedule.reset();
  }

  // Lowering is what makes the search expensive; the GPU check and the model's summary are cheap
  // after it. Pure: runs on any thread (the tir code has no global mutable state).
  bool Valid(const tir::Schedule& sch, Prepared& p) const {
    auto program = LowerAndCheck(sch, target_, limits_);
    if (!program) return false;
    p.summary = model_.Summarize(program->func);
    p.code_hash = ProgramHash(program->func);
    p.sketch = StructureHash(sch.trace());
    p.family = program->usage ? FamilyOf(*program->usage) : p.code_hash;
    return true;
  }

  const tir::Workload& workload_;
  tir::Target target_;
  int threads_;
  const CostModel& model_;
  tir::GpuLimits limits_;  // the defaults, with the search's cap on unrolled code
  bool distinct_programs_;
  std::vector<std::string> sketches_;
  EvolutionarySearch::Stats& stats_;
  std::unordered_set<std::string> seen_;  // membership only: never iterated
  std::unordered_set<size_t> programs_;   // code hashes of the admitted; membership only
  std::vector<Entry> archive_;
};

// Valid candidates and their model scores, best first (scores are comparable within one call only).
struct EvolutionarySearch::Population {
  std::vector<Member> members;
  std::vector<double> scores;  // empty for children not scored yet
};

// The candidates a NextBatch picked so far.
struct EvolutionarySearch::Batch {
  std::vector<Candidate> candidates;
  std::vector<size_t> programs;            // their code hashes
  std::unordered_set<std::string> chosen;  // trace hashes of the model's picks; membership only
};

EvolutionarySearch::EvolutionarySearch(const tir::Workload& workload, tir::Target target, EvolutionConfig config,
                                       uint64_t seed)
    : workload_(workload), target_(target), config_(config), rng_(seed) {}

void EvolutionarySearch::MarkProposed(const tir::Schedule& schedule) {
  if (!config_.distinct_programs) return;
  // The loop nest LowerAndCheck hashes, so that the two agree on what is one program.
  if (auto f = tir::Lower(schedule.state(), costmodel::FeatureLowering())) proposed_programs_.insert(ProgramHash(*f));
}

bool EvolutionarySearch::Adopt(const tir::Schedule& schedule) {
  auto program = LowerAndCheck(schedule, target_, SearchLimits(config_));
  if (!program) return false;
  return !config_.distinct_programs || proposed_programs_.insert(ProgramHash(program->func)).second;
}

std::vector<Candidate> EvolutionarySearch::NextBatch(int n, CostModel& model,
                                                     const std::unordered_set<std::string>& measured,
                                                     const std::vector<tir::Schedule>& best_measured) {
  if (n <= 0) return {};
  const size_t population = PopulationSize(n, model, best_measured);
  Pool pool(workload_, target_, ThreadCount(config_.num_threads), model, config_, stats_);
  Population pop = InitialPopulation(pool, model, population, best_measured);
  Evolve(pool, model, population, pop);
  // The batch: the model's picks from the last generation, an epsilon-greedy share of the other
  // candidates seen, and fresh samples for what is still missing.
  Batch batch;
  PickByModel(pop, n, n - EpsilonGreedyCount(n, config_.eps_greedy), measured, batch);
  PickAtRandom(pool, n, measured, batch);
  FillWithSamples(pool, n, population, measured, batch);
  proposed_programs_.insert(batch.programs.begin(), batch.programs.end());
  FreeInParallel(pop.members, 0, pool.threads());
  return std::move(batch.candidates);
}

// Blind: no model that ranks by what it learned, and no measured schedule to start from (the first
// rounds of a new job). Selection by random scores is uniform, but the generations still help: their
// random walk through mutations and the validity check moves the population away from the edges of
// the valid space. A quarter of the population keeps most of that for a quarter of the lowering.
size_t EvolutionarySearch::PopulationSize(int n, const CostModel& model,
                                          const std::vector<tir::Schedule>& best_measured) const {
  const bool blind = !model.Steers() && (best_measured.empty() || config_.seeds_from_measured <= 0);
  const auto configured = static_cast<size_t>(std::max(1, config_.population));
  return blind ? std::max(static_cast<size_t>(n), configured / 4) : configured;
}

// The best measured schedules (replayed here, so they are schedules of this workload and target
// whatever their origin), then fresh samples of the template; scored and sorted.
EvolutionarySearch::Population EvolutionarySearch::InitialPopulation(Pool& pool, CostModel& model, size_t population,
                                                                     const std::vector<tir::Schedule>& best_measured) {
  Population pop;
  const size_t from_measured =
      std::min(best_measured.size(), static_cast<size_t>(std::max(0, config_.seeds_from_measured)));
  std::vector<Proposal> seeds;
  for (size_t i = 0; i < from_measured; ++i) seeds.push_back(ProposalOf(best_measured[i].trace()));
  std::vector<Prepared> prepared = pool.PrepareTraces(seeds);
  for (size_t i = 0; i < seeds.size() && pop.members.size() < population; ++i) {
    if (auto m = pool.AdmitTrace(seeds[i], std::move(prepared[i]))) pop.members.push_back(std::move(*m));
  }
  const auto nothing_known = [](const std::string&) { return false; };
  if (pop.members.size() < population) {
    pool.SampleFresh(rng_, population - pop.members.size(), AttemptBound(static_cast<int>(population)),
                     kMaxFruitlessAttempts, nothing_known, [&](Member m) { pop.members.push_back(std::move(m)); });
  }
  pop.scores = Score(model, workload_, pop.members);
  SortByScore(pop.members, pop.scores);
  return pop;
}

// config_.generations of selection and breeding: each generation's parents are the first
// `population` of `pop` (KeepBestOfEachSketch), and parents and children compete for the next.
void EvolutionarySearch::Evolve(Pool& pool, CostModel& model, size_t population, Population& pop) {
  for (int g = 0; g < config_.generations && !pop.members.empty(); ++g) {
    if (pop.members.size() > population) {
      const size_t kept = KeepBestOfEachSketch(pop.members, pop.scores, population, config_.min_per_sketch);
      FreeInParallel(pop.members, kept, pool.threads());
      pop.scores.erase(pop.scores.begin() + static_cast<std::ptrdiff_t>(kept), pop.scores.end());
    }
    Population children = BreedChildren(pool, pop, population);
    // Parents and children are scored in one call (scores are comparable within a call only).
    for (auto& c : children.members) pop.members.push_back(std::move(c));
    pop.scores = Score(model, workload_, pop.members);
    SortByScore(pop.members, pop.scores);
  }
}

// Up to `population` new valid children of `parents` (not scored). A chunk at a time: each child's
// engine is forked from the search's, in child order, so breeding (a mutation copies the whole
// trace) runs in parallel with replay, lowering and checks; then admission in order up to where a
// one-child-at-a-time loop would stop, and the engine moves to the state that loop would leave it in
// (one draw per child: its fork).
EvolutionarySearch::Population EvolutionarySearch::BreedChildren(Pool& pool, const Population& parents,
                                                                 size_t population) {
  const std::vector<double> weights = SelectionWeights(parents.scores);
  const int threads = pool.threads();
  Population children;
  const int bound = AttemptBound(static_cast<int>(population));
  for (int attempts = 0, fruitless = 0;
       children.members.size() < population && attempts < bound && fruitless < kMaxFruitlessAttempts;) {
    const int chunk = ChunkSize(population - children.members.size(), bound - attempts, threads);
    Random ahead = rng_;
    std::vector<Random> engines;
    engines.reserve(static_cast<size_t>(chunk));
    for (int i = 0; i < chunk; ++i) engines.push_back(ahead.Fork());
    std::vector<Proposal> bred(static_cast<size_t>(chunk));
    ParallelFor(threads, bred.size(),
                [&](size_t i) { bred[i] = Breed(parents.members, weights, config_, engines[i]); });
    std::vector<Prepared> prepared = pool.PrepareTraces(bred);
    size_t used = 0;
    for (; used < bred.size() && children.members.size() < population && fruitless < kMaxFruitlessAttempts; ++used) {
      const Proposal& p = bred[used];
      if (p.hash.empty() || pool.Seen(p.hash)) {
        ++fruitless;
        continue;
      }
      fruitless = 0;
      stats_.crossed += p.crossed;
      stats_.mutated += p.mutated;
      if (auto m = pool.AdmitTrace(p, std::move(prepared[used]))) children.members.push_back(std::move(*m));
    }
    attempts += static_cast<int>(used);
    for (size_t i = 0; i < used; ++i) rng_.Fork();
    FreeInParallel(prepared, 0, threads);
    FreeInParallel(bred, 0, threads);
  }
  return children;
}

// A program proposed by an earlier call is measured or on its way: not again (the pool keeps the
// programs of one call distinct).
bool EvolutionarySearch::ProposedBefore(size_t code_hash) const {
  return config_.distinct_programs && proposed_programs_.count(code_hash) > 0;
}

// Up to `model_picks` of the best-scored unmeasured candidates of the last generation (parents and
// children), at most max_per_family of one family while other families have candidates left. Pass
// -1: the best-scored few of every sketch in the population (min_per_sketch); pass 0: by score, the
// family cap; pass 1: families over the cap, when short.
void EvolutionarySearch::PickByModel(const Population& pop, int n, int model_picks,
                                     const std::unordered_set<std::string>& measured, Batch& batch) const {
  std::unordered_map<size_t, int> per_family, per_sketch;
  const int family_cap = config_.max_per_family > 0 ? config_.max_per_family : n;
  for (int pass = config_.min_per_sketch > 0 ? -1 : 0; pass < 2; ++pass) {
    for (size_t i = 0; i < pop.members.size() && static_cast<int>(batch.candidates.size()) < model_picks; ++i) {
      const Member& m = pop.members[i];
      if (measured.count(m.hash) || ProposedBefore(m.code_hash) || batch.chosen.count(m.hash)) continue;
      if (pass == -1) {
        if (per_sketch[m.sketch]++ >= config_.min_per_sketch) continue;
        ++per_family[m.family];
      } else if (pass == 0 && per_family[m.family]++ >= family_cap) {
        continue;
      }
      batch.chosen.insert(m.hash);
      batch.candidates.push_back({m.schedule, m.hash, pop.scores[i]});
      batch.programs.push_back(m.code_hash);
    }
  }
}

// The epsilon-greedy share, up to a batch of `n`: drawn uniformly from every other valid unmeasured
// candidate seen in this call (all generations).
void EvolutionarySearch::PickAtRandom(const Pool& pool, int n, const std::unordered_set<std::string>& measured,
                                      Batch& batch) {
  std::vector<size_t> rest;  // archive order: deterministic
  for (size_t i = 0; i < pool.archive().size(); ++i) {
    const auto& e = pool.archive()[i];
    if (!measured.count(e.hash) && !batch.chosen.count(e.hash) && !ProposedBefore(e.code_hash)) rest.push_back(i);
  }
  // Partial Fisher-Yates: the first `k` of `rest` become a uniform sample without replacement.
  const size_t k = std::min(rest.size(), static_cast<size_t>(n) - batch.candidates.size());
  for (size_t j = 0; j < k; ++j) {
    std::swap(rest[j], rest[rng_.UniformInt(static_cast<int64_t>(j), static_cast<int64_t>(rest.size()) - 1)]);
    const auto& e = pool.archive()[rest[j]];
    auto trace = tir::Trace::FromJsonText(e.trace_json);
    AUTOTUNE_CHECK(trace.ok(), "an archived trace must parse");
    auto sch = tir::Schedule::Replay(workload_, target_, *trace);
    AUTOTUNE_CHECK(sch.ok(), "an archived candidate must replay as it did before");
    batch.candidates.push_back({std::move(*sch), e.hash, 0.0});
    batch.programs.push_back(e.code_hash);
  }
}

// Still short of `n`: the population held too few unmeasured candidates (a small space, most of it
// measured). Fresh samples, checked against `measured` before they are lowered, find the rest; the
// bounds make an exhausted space cost a bounded number of cheap draws, never a hang.
void EvolutionarySearch::FillWithSamples(Pool& pool, int n, size_t population,
                                         const std::unordered_set<std::string>& measured, Batch& batch) {
  if (static_cast<int>(batch.candidates.size()) >= n) return;
  const int fill_attempts = 4 * (n + static_cast<int>(population)) + 4 * kMaxFruitlessAttempts;
  pool.SampleFresh(
      rng_, static_cast<size_t>(n) - batch.candidates.size(), fill_attempts, 4 * kMaxFruitlessAttempts,
      [&](const std::string& h) { return measured.count(h) > 0; },
      [&](Member m) {
        batch.programs.push_back(m.code_hash);
        batch.candidates.push_back({std::move(m.schedule), std::move(m.hash), 0.0});
      });
}

}  // namespace autotune::search
