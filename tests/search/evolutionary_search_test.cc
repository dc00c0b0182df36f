// Mutators, crossover and the evolutionary search: every child replays and lowers, mutators change
// exactly one decision, crossover mixes whole decisions, and NextBatch proposes distinct, valid,
// unmeasured candidates deterministically, following the model's ranking. Small populations keep
// the lowering cost (the search's real cost) low.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <atomic>
#include <cstdio>
#include <functional>
#include <set>
#include <tuple>

#include "db/record.h"
#include "costmodel/cost_model.h"
#include "search/crossover.h"
#include "search/default_schedule.h"
#include "search/evolutionary_search.h"
#include "search/mutation.h"
#include "tir/analysis/gpu_validity.h"
#include "tir/codegen/codegen_c.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/printer.h"

namespace autotune::search {
namespace {

using tir::TargetKind;
using tir::Trace;

tir::Workload Make(const std::string& op, const std::string& shape) {
  auto w = tir::MakeWorkload(op, shape);
  EXPECT_TRUE(w) << w.error().message;
  return *w;
}
tir::Workload Gemm() { return Make("gemm", "M=64,N=128,K=96"); }
tir::Workload Conv() { return Make("conv2d", "N=1,C=16,H=14,W=14,K=32,R=3,S=3,pad=1"); }

std::string HashOf(const Trace& t) { return db::HashTraceJson(t.ToJson().dump()); }

// Lowers, and for cuda checks the GPU limits; returns the error message or "".
std::string Check(const tir::Schedule& sch, bool gpu_limits) {
  auto f = tir::Lower(sch.state());
  if (!f) return "lower: " + f.error().message;
  if (gpu_limits && sch.target() == TargetKind::kCuda) {
    auto u = tir::CheckGpuValidity(*f);
    if (!u) return "gpu validity: " + u.error().message;
  }
  return "";
}

// The indices of the sampling instructions whose decisions differ.
std::vector<size_t> DiffDecisions(const Trace& a, const Trace& b) {
  std::vector<size_t> out;
  for (size_t i : a.SamplingInstructions()) {
    if (a.instructions()[i].decision != b.instructions()[i].decision) out.push_back(i);
  }
  return out;
}

int64_t Product(const nlohmann::json& tiles) {
  int64_t p = 1;
  for (const auto& t : tiles) p *= t.get<int64_t>();
  return p;
}

// The first random schedule from seed, seed + 1000, seed + 2000, ... that the sketch does not reject.
Result<tir::Schedule> FirstSample(const tir::Workload& w, TargetKind target, uint64_t seed) {
  for (int k = 0;; ++k) {
    auto s = RandomSchedule(w, target, seed + 1000 * k);
    if (s || k == 50) return s;
  }
}

struct Case {
  const char* name;
  tir::Workload workload;
  TargetKind target;
};
std::vector<Case> Cases() {
  return {{"gemm cpu", Gemm(), TargetKind::kCpu},
          {"gemm cuda", Gemm(), TargetKind::kCuda},
          {"conv2d cpu", Conv(), TargetKind::kCpu},
          {"conv2d cuda", Conv(), TargetKind::kCuda}};
}

TEST(Mutation, BuiltinsAreRegisteredInOrderWithWeights) {
  const auto& entries = BuiltinMutators().entries();
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].mutator->Name(), "tile_size");
  EXPECT_EQ(entries[1].mutator->Name(), "unroll");
  EXPECT_EQ(entries[2].mutator->Name(), "vector_width");
  EXPECT_EQ(entries[3].mutator->Name(), "compute_location");
  for (const auto& e : entries) EXPECT_GT(e.weight, 0);
  EXPECT_NE(BuiltinMutators().Find("unroll"), nullptr);
  EXPECT_EQ(BuiltinMutators().Find("nope"), nullptr);
}

TEST(Mutation, EveryMutatorChangesExactlyItsDecisionAndReplays) {
  Random rng(7);
  for (const Case& c : Cases()) {
    int gpu_valid = 0, children = 0;
    // Parents that fit the GPU limits themselves, so that a mutant's validity reflects the mutation.
    int parents = 0;
    for (uint64_t seed = 1; parents < 3 && seed < 100; ++seed) {
      auto parent = RandomSchedule(c.workload, c.target, seed);
      if (!parent || !Check(*parent, true).empty()) continue;  // a sketch may reject a sample
      ++parents;
      const Trace& pt = parent->trace();
      for (const auto& e : BuiltinMutators().entries()) {
        const std::string what = fmt::format("{} seed {} {}", c.name, seed, e.mutator->Name());
        for (int k = 0; k < 4; ++k) {
          auto child = e.mutator->Apply(pt, rng);
          const bool cpu = c.target == TargetKind::kCpu;
          if (e.mutator->Name() == "compute_location" && cpu) {
            // The cpu sketch samples no compute location.
            EXPECT_FALSE(child) << what;
            continue;
          }
          // Nor load widths: its split factors sampled as categoricals are the reduction blocks of
          // cpu.registers, where a parent has them.
          if (e.mutator->Name() == "vector_width" && cpu && !child) continue;
          if (e.mutator->Name() == "compute_location" && c.workload.op == "gemm") {
            // One outer reduction loop: the shared copies have a single candidate location.
            EXPECT_FALSE(child) << what;
            continue;
          }
          ASSERT_TRUE(child) << what;
          EXPECT_TRUE(SameStructure(pt, *child)) << what;
          const auto diff = DiffDecisions(pt, *child);
          ASSERT_EQ(diff.size(), 1u) << what;
          const auto& before = pt.instructions()[diff[0]];
          const auto& after = child->instructions()[diff[0]];
          if (e.mutator->Name() == "tile_size") {
            ASSERT_EQ(after.kind, "sample_perfect_tile") << what;
            EXPECT_EQ(Product(after.decision), Product(before.decision)) << what;
            const int64_t max_inner = after.attrs["max_innermost"].get<int64_t>();
            if (max_inner > 0) {
              EXPECT_LE(after.decision.back().get<int64_t>(), max_inner) << what;
            }
          } else if (e.mutator->Name() == "compute_location") {
            ASSERT_EQ(after.kind, "sample_compute_location") << what;
            const int64_t d = after.decision.get<int64_t>();
            EXPECT_GE(d, 0);
            EXPECT_LT(d, static_cast<int64_t>(after.inputs.size()));
          } else {
            ASSERT_EQ(after.kind, "sample_categorical") << what;
            const int64_t d = after.decision.get<int64_t>();
            EXPECT_GE(d, 0);
            EXPECT_LT(d, static_cast<int64_t>(after.attrs["candidates"].size()));
            // Told apart by the consumer: the unroll depth's value feeds annotate_unroll.
            const std::string sym = after.outputs.at(0);
            bool feeds_unroll = false;
            for (const auto& inst : child->instructions()) {
              if (inst.kind == "annotate_unroll" && inst.inputs.dump().find('"' + sym + '"') != std::string::npos) {
                feeds_unroll = true;
              }
            }
            EXPECT_EQ(feeds_unroll, e.mutator->Name() == "unroll") << what;
          }
          auto replayed = tir::Schedule::Replay(c.workload, c.target, *child);
          ASSERT_TRUE(replayed) << what << ": " << replayed.error().message << "\n" << child->ToText();
          EXPECT_EQ(HashOf(replayed->trace()), HashOf(*child)) << what;
          EXPECT_EQ(Check(*replayed, false), "") << what << "\n" << child->ToText();
          ++children;
          gpu_valid += Check(*replayed, true).empty();
        }
      }
    }
    EXPECT_EQ(parents, 3) << c.name;
    // Most mutants of valid parents fit the GPU limits; a few may exceed them (the search drops those).
    EXPECT_GT(gpu_valid, children / 2) << c.name;
  }
}

TEST(Mutation, RegistryMutateFallsBackToApplicableMutators) {
  auto parent = RandomSchedule(Gemm(), TargetKind::kCpu, 3);
  ASSERT_TRUE(parent);
  MutatorRegistry only_vector;
  only_vector.Register(MakeVectorWidthMutator(), 1.0);
  Random rng(1);
  EXPECT_FALSE(only_vector.Mutate(parent->trace(), rng));  // no load width on cpu
  MutatorRegistry reg;
  reg.Register(MakeVectorWidthMutator(), 100.0);
  reg.Register(MakeUnrollMutator(), 1.0);
  std::string applied;
  auto child = reg.Mutate(parent->trace(), rng, &applied);
  ASSERT_TRUE(child);
  EXPECT_EQ(applied, "unroll");
  EXPECT_EQ(DiffDecisions(parent->trace(), *child).size(), 1u);
}

TEST(Mutation, TileSizeMutationRespectsMaxInnermost) {
  // A decision whose innermost is at the limit: no factor may move into it.
  auto parent = RandomSchedule(Make("gemm", "M=32,N=32,K=32"), TargetKind::kCuda, 5);
  ASSERT_TRUE(parent);
  Random rng(3);
  auto mutator = MakeTileSizeMutator();
  for (int k = 0; k < 200; ++k) {
    auto child = mutator->Apply(parent->trace(), rng);
    ASSERT_TRUE(child);
    for (size_t i : child->SamplingInstructions()) {
      const auto& inst = child->instructions()[i];
      if (inst.kind != "sample_perfect_tile") continue;
      const int64_t max_inner = inst.attrs["max_innermost"].get<int64_t>();
      if (max_inner > 0) {
        EXPECT_LE(inst.decision.back().get<int64_t>(), max_inner);
      }
    }
  }
}

TEST(Crossover, ChildTakesEachDecisionFromOneParentAndReplays) {
  Random rng(11);
  for (const Case& c : Cases()) {
    int mixed = 0;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      auto a = FirstSample(c.workload, c.target, seed);
      ASSERT_TRUE(a) << c.name;
      // A second parent of the same sketch and structure (a workload may offer several sketches, and
      // cpu.registers several forms of its operands and accumulator).
      auto b = FirstSample(c.workload, c.target, seed + 100);
      for (uint64_t k = 1; b && !SameStructure(a->trace(), b->trace()) && k < 400; ++k) {
        b = FirstSample(c.workload, c.target, seed + 100 + k);
      }
      ASSERT_TRUE(b) << c.name;
      ASSERT_TRUE(SameStructure(a->trace(), b->trace())) << c.name;
      auto child = Crossover(a->trace(), b->trace(), rng);
      ASSERT_TRUE(child) << c.name;
      EXPECT_TRUE(SameStructure(a->trace(), *child)) << c.name;
      bool from_a = false, from_b = false;
      for (size_t i : child->SamplingInstructions()) {
        const auto& d = child->instructions()[i].decision;
        const auto& da = a->trace().instructions()[i].decision;
        const auto& db = b->trace().instructions()[i].decision;
        EXPECT_TRUE(d == da || d == db) << c.name << " instruction " << i;
        if (da != db) {
          from_a |= d == da;
          from_b |= d == db;
        }
      }
      mixed += from_a && from_b;
      auto replayed = tir::Schedule::Replay(c.workload, c.target, *child);
      ASSERT_TRUE(replayed) << c.name << ": " << replayed.error().message;
      EXPECT_EQ(Check(*replayed, false), "") << c.name << "\n" << child->ToText();
    }
    EXPECT_GT(mixed, 0) << c.name << ": no child mixed its parents' decisions";
  }
}

TEST(Crossover, NotApplicableToDifferentStructures) {
  auto cpu = FirstSample(Gemm(), TargetKind::kCpu, 1);
  auto cuda = FirstSample(Gemm(), TargetKind::kCuda, 1);
  auto conv = FirstSample(Conv(), TargetKind::kCpu, 1);
  ASSERT_TRUE(cpu && cuda && conv);
  Random rng(1);
  EXPECT_FALSE(SameStructure(cpu->trace(), cuda->trace()));
  EXPECT_FALSE(Crossover(cpu->trace(), cuda->trace(), rng));
  EXPECT_FALSE(Crossover(cpu->trace(), conv->trace(), rng));
}

// Scores from a function of the trace: deterministic, and lets a test prefer a feature.
class FakeModel final : public CostModel {
 public:
  explicit FakeModel(std::function<double(const Trace&)> f) : f_(std::move(f)) {}
  std::string Name() const override { return "fake"; }
  std::vector<double> Predict(const tir::Workload&, const std::vector<const tir::Schedule*>& c) override {
    ++calls;
    std::vector<double> s;
    for (const auto* sch : c) s.push_back(f_(sch->trace()));
    return s;
  }
  void Update(const tir::Workload&, const std::vector<const tir::Schedule*>&,
              const std::vector<std::optional<double>>&) override {}
  int calls = 0;

 private:
  std::function<double(const Trace&)> f_;
};

// The innermost tile size of the first tiling decision.
int64_t FirstInnermostTile(const Trace& t) {
  for (const auto& inst : t.instructions()) {
    if (inst.kind == "sample_perfect_tile") return inst.decision.back().get<int64_t>();
  }
  return 0;
}

// A deterministic score in [1, 2) from the trace hash: "random" ranking that is the same every run.
double HashScore(const Trace& t) {
  const std::string h = HashOf(t);
  return 1.0 + static_cast<double>(std::stoull(h.substr(0, 12), nullptr, 16)) / static_cast<double>(1ULL << 48);
}

EvolutionConfig SmallConfig() {
  EvolutionConfig c;
  c.population = 64;
  c.generations = 2;
  return c;
}

void ExpectValidBatch(const std::vector<Candidate>& batch, const tir::Workload& w, TargetKind target,
                      const std::unordered_set<std::string>& measured, const std::string& what) {
  std::set<std::string> hashes;
  for (const auto& c : batch) {
    EXPECT_EQ(c.trace_hash, HashOf(c.schedule.trace())) << what;
    EXPECT_TRUE(hashes.insert(c.trace_hash).second) << what << ": duplicate candidate";
    EXPECT_EQ(measured.count(c.trace_hash), 0u) << what << ": already measured";
    EXPECT_EQ(c.schedule.target(), target);
    EXPECT_EQ(c.schedule.workload().CanonicalText(), w.CanonicalText());
    EXPECT_EQ(Check(c.schedule, true), "") << what << "\n" << c.schedule.trace().ToText();
  }
}

TEST(EvolutionarySearch, BatchesAreDistinctValidAndUnmeasured) {
  for (TargetKind target : {TargetKind::kCpu, TargetKind::kCuda}) {
    const std::string what = tir::TargetKindName(target);
    const tir::Workload w = Gemm();
    // Without the few best of every sketch first (min_per_sketch), the model's picks come in its order.
    EvolutionConfig config = SmallConfig();
    config.min_per_sketch = 0;
    EvolutionarySearch search(w, target, config, 42);
    FakeModel model(HashScore);
    std::unordered_set<std::string> measured;
    auto first = search.NextBatch(16, model, measured, {});
    ASSERT_EQ(first.size(), 16u) << what;
    ExpectValidBatch(first, w, target, measured, what);
    EXPECT_EQ(model.calls, 1 + SmallConfig().generations) << what;
    // The epsilon share: round(0.05 * 16) = 1, at least 1; random picks come last with score 0.
    EXPECT_EQ(first.back().score, 0.0) << what;
    for (size_t i = 0; i + 1 < first.size(); ++i) EXPECT_GT(first[i].score, 0.0) << what;
    // The greedy part follows the model's ranking.
    for (size_t i = 0; i + 2 < first.size(); ++i) EXPECT_GE(first[i].score, first[i + 1].score) << what;
    const auto& s = search.stats();
    EXPECT_GE(s.sampled, 64) << what;
    EXPECT_GT(s.mutated, 0) << what;
    EXPECT_GT(s.crossed, 0) << what;

    // Measured ones seed the next population but are never proposed again.
    std::vector<tir::Schedule> best;
    for (const auto& c : first) {
      measured.insert(c.trace_hash);
      best.push_back(c.schedule);
    }
    auto second = search.NextBatch(16, model, measured, best);
    ASSERT_EQ(second.size(), 16u) << what;
    ExpectValidBatch(second, w, target, measured, what);
  }
}

// The largest fully unrolled code among a batch's candidates (cuda).
int64_t MostUnrolledStatements(const std::vector<Candidate>& batch) {
  int64_t most = 0;
  for (const auto& c : batch) {
    auto f = tir::Lower(c.schedule.state());
    EXPECT_TRUE(f);
    if (!f) continue;
    tir::GpuLimits roomy;
    roomy.max_unrolled_statements = int64_t{1} << 40;
    auto u = tir::CheckGpuValidity(*f, roomy);
    EXPECT_TRUE(u);
    if (u) most = std::max(most, u->unrolled_statements);
  }
  return most;
}

// Candidates over the cap on unrolled code are never proposed (they would mostly run into the build
// timeout); the same search without the cap proposes some.
TEST(EvolutionarySearch, CandidatesWithTooMuchUnrolledCodeAreNotProposed) {
  const tir::Workload w = Gemm();
  FakeModel model(HashScore);
  EvolutionConfig roomy = SmallConfig();
  roomy.max_unrolled_statements = int64_t{1} << 40;
  EvolutionarySearch uncapped(w, TargetKind::kCuda, roomy, 7);
  const int64_t most = MostUnrolledStatements(uncapped.NextBatch(32, model, {}, {}));
  ASSERT_GT(most, 8);

  EvolutionConfig capped = roomy;
  capped.max_unrolled_statements = most / 2;
  EvolutionarySearch search(w, TargetKind::kCuda, capped, 7);
  auto batch = search.NextBatch(32, model, {}, {});
  EXPECT_FALSE(batch.empty());
  EXPECT_LE(MostUnrolledStatements(batch), capped.max_unrolled_statements);
  EXPECT_GT(search.stats().invalid, 0);
  EXPECT_EQ(EvolutionConfig{}.max_unrolled_statements, 3072);
}

// What the search tells candidates' families apart by: the block shape and tiles of the program.
std::tuple<int64_t, int64_t, int64_t, int> FamilyKey(const tir::Schedule& s) {
  auto f = tir::Lower(s.state());
  EXPECT_TRUE(f);
  auto u = tir::CheckGpuValidity(*f);
  EXPECT_TRUE(u);
  return {u->threads_per_block, u->shared_bytes, u->local_bytes_per_thread, u->kernels};
}

// No random picks and no family cap: the batch is the model's best, as far as a test is concerned.
EvolutionConfig GreedyConfig() {
  EvolutionConfig c = SmallConfig();
  c.eps_greedy = 0;
  c.max_per_family = 0;
  c.min_per_sketch = 0;
  return c;
}

// The first batch of 16 of a cuda search with nothing measured.
std::vector<Candidate> CudaBatchOf16(const tir::Workload& w, const EvolutionConfig& config, uint64_t seed,
                                     CostModel& model) {
  EvolutionarySearch search(w, TargetKind::kCuda, config, seed);
  return search.NextBatch(16, model, {}, {});
}

TEST(EvolutionarySearch, ABatchTakesAtMostMaxPerFamilyOfOneFamily) {
  const tir::Workload w = Gemm();
  // A model that ranks whole families: every member of the family it likes best scores the same.
  FakeModel model([&](const Trace& t) {
    auto s = tir::Schedule::Replay(w, TargetKind::kCuda, t);
    EXPECT_TRUE(s);
    const auto [threads, shared, local, kernels] = FamilyKey(*s);
    return 1.0 + static_cast<double>((threads * 7919 + shared * 31 + local * 17 + kernels) % 1000) / 1000.0;
  });
  auto largest_family = [](const std::vector<Candidate>& batch) {
    std::map<std::tuple<int64_t, int64_t, int64_t, int>, int> members;
    int most = 0;
    for (const auto& c : batch) most = std::max(most, ++members[FamilyKey(c.schedule)]);
    return most;
  };
  EvolutionConfig config = GreedyConfig();
  const auto crowded = CudaBatchOf16(w, config, 11, model);
  ASSERT_EQ(crowded.size(), 16u);
  EXPECT_GT(largest_family(crowded), 3) << "without a cap the favourite family crowds the batch";

  config.max_per_family = 3;
  const auto spread = CudaBatchOf16(w, config, 11, model);
  ASSERT_EQ(spread.size(), 16u);
  EXPECT_LE(largest_family(spread), 3);
  ExpectValidBatch(spread, w, TargetKind::kCuda, {}, "capped");
}

// A trace of the split-K sketch (it holds an rfactor).
bool IsSplitK(const Trace& t) {
  for (const auto& inst : t.instructions()) {
    if (inst.kind == "rfactor") return true;
  }
  return false;
}

TEST(EvolutionarySearch, ABatchTakesTheBestFewOfEverySketchWithMinPerSketch) {
  const tir::Workload w = Make("gemm", "M=4,N=64,K=4096");  // offers cuda.tiled and cuda.split_k
  // A start model sure that split-K wins: every split-K candidate outscores every other.
  FakeModel model([](const Trace& t) { return (IsSplitK(t) ? 10.0 : 0.0) + HashScore(t); });
  const auto plain_count = [](const std::vector<Candidate>& batch) {
    int plain = 0;
    for (const auto& c : batch) plain += !IsSplitK(c.schedule.trace());
    return plain;
  };
  EvolutionConfig config = GreedyConfig();
  const auto all_split = CudaBatchOf16(w, config, 3, model);
  ASSERT_EQ(all_split.size(), 16u);
  EXPECT_EQ(plain_count(all_split), 0) << "the model's favourite sketch takes the whole batch";

  config.min_per_sketch = 3;
  const auto both = CudaBatchOf16(w, config, 3, model);
  ASSERT_EQ(both.size(), 16u);
  EXPECT_EQ(plain_count(both), 3) << "the three best of the other sketch, the rest by score";
  ExpectValidBatch(both, w, TargetKind::kCuda, {}, "min_per_sketch");
}

// The floor is the default because it costs a workload of one sketch nothing: its best few are the
// first by score anyway, so the batch is the same, candidate for candidate.
TEST(EvolutionarySearch, MinPerSketchLeavesTheBatchOfAWorkloadOfOneSketchAsItWas) {
  const tir::Workload w = Make("gemm", "M=256,N=256,K=64");  // a reduction too short for split-K
  FakeModel model(HashScore);
  EvolutionConfig config = SmallConfig();  // with the epsilon share and the family cap
  config.min_per_sketch = 0;
  const auto without = CudaBatchOf16(w, config, 9, model);
  config.min_per_sketch = 4;
  const auto with = CudaBatchOf16(w, config, 9, model);
  ASSERT_EQ(without.size(), 16u);
  ASSERT_EQ(with.size(), without.size());
  for (size_t i = 0; i < with.size(); ++i) {
    EXPECT_FALSE(IsSplitK(with[i].schedule.trace())) << "candidate " << i;
    EXPECT_EQ(with[i].trace_hash, without[i].trace_hash) << "candidate " << i;
  }
}

TEST(EvolutionarySearch, EpsilonShareIsRandom) {
  const tir::Workload w = Gemm();
  EvolutionConfig config = SmallConfig();
  config.eps_greedy = 0.25;
  EvolutionarySearch search(w, TargetKind::kCpu, config, 5);
  FakeModel model(HashScore);
  auto batch = search.NextBatch(16, model, {}, {});
  ASSERT_EQ(batch.size(), 16u);
  int random = 0;
  for (const auto& c : batch) random += c.score == 0.0;
  EXPECT_EQ(random, 4);
  config.eps_greedy = 0;
  EvolutionarySearch greedy(w, TargetKind::kCpu, config, 5);
  batch = greedy.NextBatch(16, model, {}, {});
  ASSERT_EQ(batch.size(), 16u);
  for (const auto& c : batch) EXPECT_GT(c.score, 0.0);
}

TEST(EvolutionarySearch, BlindRoundsEvolveAQuarterOfThePopulation) {
  // A model that does not steer yet and nothing measured: a quarter of the population evolves (random
  // scores select uniformly; the generations still walk away from the edges of the valid space).
  const tir::Workload w = Conv();
  EvolutionConfig config = SmallConfig();
  auto random_model = costmodel::MakeRandomCostModel(3);
  ASSERT_FALSE(random_model->Steers());
  EvolutionarySearch blind(w, TargetKind::kCuda, config, 1);
  const auto first = blind.NextBatch(8, *random_model, {}, {});
  ASSERT_EQ(first.size(), 8u);
  ExpectValidBatch(first, w, TargetKind::kCuda, {}, "blind");
  EXPECT_GT(blind.stats().mutated, 0);
  const int64_t blind_sampled = blind.stats().sampled;
  EXPECT_GE(blind_sampled, config.population / 4);
  EXPECT_LT(blind_sampled, config.population) << "a quarter of the population, plus the invalid samples";

  // With measured schedules to start from, the same model evolves the whole population.
  std::unordered_set<std::string> measured;
  std::vector<tir::Schedule> best;
  for (const auto& c : first) {
    measured.insert(c.trace_hash);
    best.push_back(c.schedule);
  }
  const auto second = blind.NextBatch(8, *random_model, measured, best);
  ExpectValidBatch(second, w, TargetKind::kCuda, measured, "seeded");
  EXPECT_GE(blind.stats().sampled - blind_sampled, config.population - static_cast<int>(best.size()));

  // A model that steers: the whole population from the first batch on.
  FakeModel steering(HashScore);
  ASSERT_TRUE(steering.Steers());
  EvolutionarySearch guided(w, TargetKind::kCuda, config, 1);
  ASSERT_EQ(guided.NextBatch(8, steering, {}, {}).size(), 8u);
  EXPECT_GE(guided.stats().sampled, config.population);
}

std::vector<std::string> Hashes(const std::vector<Candidate>& batch) {
  std::vector<std::string> out;
  for (const auto& c : batch) out.push_back(c.trace_hash);
  return out;
}

TEST(EvolutionarySearch, DeterministicForASeed) {
  const tir::Workload w = Conv();
  auto run = [&](uint64_t seed, uint64_t model_seed) {
    EvolutionarySearch search(w, TargetKind::kCuda, SmallConfig(), seed);
    auto model = costmodel::MakeRandomCostModel(model_seed);
    auto first = search.NextBatch(8, *model, {}, {});
    std::unordered_set<std::string> measured;
    std::vector<tir::Schedule> best;
    for (const auto& c : first) {
      measured.insert(c.trace_hash);
      best.push_back(c.schedule);
    }
    auto out = Hashes(first);
    for (const auto& h : Hashes(search.NextBatch(8, *model, measured, best))) out.push_back(h);
    return out;
  };
  const auto a = run(1, 9);
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a, run(1, 9));
  EXPECT_NE(a, run(2, 9));
}

TEST(EvolutionarySearch, FollowsTheModel) {
  // A model that prefers a large innermost tile of the first tiling decision (the M axis, up to 64 on
  // cpu) pulls the batch toward it, compared with a ranking that ignores it; and the generations
  // (selection by score, mutation, crossover) pull further than ranking the initial samples alone.
  const tir::Workload w = Make("gemm", "M=256,N=64,K=64");
  auto mean_feature = [&](CostModel& model, int generations) {
    EvolutionConfig config = SmallConfig();
    config.generations = generations;
    config.eps_greedy = 0;
    EvolutionarySearch search(w, TargetKind::kCpu, config, 3);
    auto batch = search.NextBatch(16, model, {}, {});
    EXPECT_EQ(batch.size(), 16u);
    double sum = 0;
    for (const auto& c : batch) sum += static_cast<double>(FirstInnermostTile(c.schedule.trace()));
    return sum / static_cast<double>(batch.size());
  };
  FakeModel prefers([](const Trace& t) { return static_cast<double>(FirstInnermostTile(t)); });
  FakeModel indifferent(HashScore);
  const double evolved = mean_feature(prefers, 3);
  const double ranked = mean_feature(prefers, 0);
  const double baseline = mean_feature(indifferent, 3);
  std::printf("mean innermost tile: %.2f evolved, %.2f initial samples ranked, %.2f indifferent model\n", evolved,
              ranked, baseline);
  EXPECT_GT(ranked, 1.5 * baseline);
  EXPECT_GT(evolved, ranked);
}

// A model that wants a summary of the lowered program (the length of its printed body), made on the
// search's threads, which must reach PredictSummarized for every candidate scored.
class SummarizingModel final : public CostModel {
 public:
  std::string Name() const override { return "summarizing"; }
  std::vector<float> Summarize(const tir::PrimFunc& lowered) const override {
    ++summarized;
    return {static_cast<float>(tir::ToString(lowered.body).size())};
  }
  std::vector<double> Predict(const tir::Workload&, const std::vector<const tir::Schedule*>& c) override {
    ++unsummarized_calls;
    return std::vector<double>(c.size(), 0.0);
  }
  std::vector<double> PredictSummarized(const tir::Workload&, const std::vector<const tir::Schedule*>& c,
                                        const std::vector<std::vector<float>>& summaries) override {
    EXPECT_EQ(summaries.size(), c.size());
    std::vector<double> scores;
    for (size_t i = 0; i < c.size(); ++i) {
      ++scored;
      auto f = tir::Lower(c[i]->state());
      EXPECT_TRUE(f);
      // The summary is of this very candidate.
      if (!summaries[i].empty() && f) matching += summaries[i][0] == static_cast<float>(tir::ToString(f->body).size());
      scores.push_back(summaries[i].empty() ? 0.0 : summaries[i][0]);
    }
    return scores;
  }
  void Update(const tir::Workload&, const std::vector<const tir::Schedule*>&,
              const std::vector<std::optional<double>>&) override {}
  mutable std::atomic<int> summarized{0};
  int scored = 0, matching = 0, unsummarized_calls = 0;
};

TEST(EvolutionarySearch, TheModelScoresSummariesMadeWhereTheSearchLowers) {
  const tir::Workload w = Gemm();
  EvolutionarySearch search(w, TargetKind::kCuda, SmallConfig(), 5);
  SummarizingModel model;
  auto batch = search.NextBatch(16, model, {}, {});
  ASSERT_EQ(batch.size(), 16u);
  EXPECT_EQ(model.unsummarized_calls, 0);
  EXPECT_GT(model.scored, 64);
  EXPECT_EQ(model.matching, model.scored) << "every scored candidate came with its own summary";
  // Each candidate is summarized once, when it is checked, however often it is scored.
  EXPECT_LT(model.summarized.load(), model.scored);
}

// Every candidate a search proposes until it runs dry (the trace hashes it returned).
std::vector<Candidate> ExhaustSearch(EvolutionarySearch& search, CostModel& model,
                                     std::unordered_set<std::string>& measured, const tir::Workload& w) {
  std::vector<Candidate> all;
  auto batch = search.NextBatch(200, model, measured, {});
  EXPECT_GT(batch.size(), 0u);
  int rounds = 0;
  while (!batch.empty() && rounds < 40) {
    ExpectValidBatch(batch, w, TargetKind::kCpu, measured, "tiny");
    for (auto& c : batch) {
      measured.insert(c.trace_hash);
      all.push_back(std::move(c));
    }
    batch = search.NextBatch(64, model, measured, {});
    ++rounds;
  }
  EXPECT_TRUE(batch.empty());
  EXPECT_TRUE(search.NextBatch(8, model, measured, {}).empty());
  return all;
}

// The C source with its loop variables renamed in order of appearance (v0, v1, ...): lowering names
// a loop after the split that made it (i_2 in one schedule is i_3 in another), which changes no code.
std::string WithoutLoopNames(const std::string& code) {
  static const std::regex loop_var(R"(\b[A-Za-z]+_[0-9]+\b)");
  std::map<std::string, std::string> names;
  std::string out;
  auto last = code.cbegin();
  for (std::sregex_iterator it(code.begin(), code.end(), loop_var), end; it != end; ++it) {
    out.append(last, (*it)[0].first);
    auto [name, fresh] = names.emplace(it->str(), "v" + std::to_string(names.size()));
    out += name->second;
    last = (*it)[0].second;
  }
  out.append(last, code.cend());
  return out;
}

// How many different programs (generated C sources, loop names aside) the candidates make.
size_t DistinctPrograms(const std::vector<Candidate>& candidates) {
  std::set<std::string> sources;
  for (const auto& c : candidates) {
    auto f = tir::Lower(c.schedule.state());
    EXPECT_TRUE(f);
    if (!f) continue;
    auto code = tir::CodegenC(*f);
    EXPECT_TRUE(code);
    if (code) sources.insert(WithoutLoopNames(code->code));
  }
  return sources.size();
}

TEST(EvolutionarySearch, TinySpaceIsExhaustedWithoutHanging) {
  // gemm 2x2x2 on cpu: cpu.tiled's 4 x 4 spatial tilings, 2 reduction tilings and 4 unroll depths (128
  // schedules) and cpu.registers' 3 x 3 spatial tilings, B copied or not and 4 unroll depths (72), fewer programs
  // (unroll depths that unroll the same loops, or tilings that leave loops of extent 1, make the same
  // code).
  const tir::Workload w = Make("gemm", "M=2,N=2,K=2");
  FakeModel model(HashScore);

  EvolutionConfig by_trace = SmallConfig();
  by_trace.distinct_programs = false;
  EvolutionarySearch every_trace(w, TargetKind::kCpu, by_trace, 1);
  std::unordered_set<std::string> measured;
  const std::vector<Candidate> traces = ExhaustSearch(every_trace, model, measured, w);
  EXPECT_EQ(traces.size(), 128u + 72u);
  const size_t programs = DistinctPrograms(traces);
  EXPECT_LT(programs, traces.size());

  // By program (the default): each program once, and all of them.
  EvolutionarySearch search(w, TargetKind::kCpu, SmallConfig(), 1);
  measured.clear();
  const std::vector<Candidate> distinct = ExhaustSearch(search, model, measured, w);
  EXPECT_EQ(distinct.size(), programs);
  EXPECT_EQ(DistinctPrograms(distinct), distinct.size());
  EXPECT_GT(search.stats().same_program, 0);
}

// Everything a search proposes and counts over a few batches, as text.
std::string Transcript(const tir::Workload& w, TargetKind target, EvolutionConfig config, int n, int rounds) {
  EvolutionarySearch search(w, target, config, 7);
  auto model = costmodel::MakeRandomCostModel(11);
  std::unordered_set<std::string> measured;
  std::vector<tir::Schedule> best;
  std::string out;
  for (int r = 0; r < rounds; ++r) {
    for (const auto& c : search.NextBatch(n, *model, measured, best)) {
      out += fmt::format("{} {}\n", c.trace_hash, c.score);
      measured.insert(c.trace_hash);
      best.push_back(c.schedule);
    }
    const auto& s = search.stats();
    out += fmt::format("stats {} {} {} {}\n", s.sampled, s.mutated, s.crossed, s.invalid);
  }
  return out;
}

TEST(EvolutionarySearch, SameBatchesForAnyThreadCount) {
  // Each candidate's random choices come from its own engine (forked, or seeded, in candidate order
  // on the calling thread), so the thread count changes nothing: not the candidates, their order or
  // scores, nor the counters.
  struct Run {
    std::string what;
    tir::Workload workload;
    TargetKind target;
    int n, rounds;
  };
  std::vector<Run> runs;
  for (const auto& c : Cases()) runs.push_back({c.name, c.workload, c.target, 16, 2});
  // A tiny space (128 schedules): duplicates, the fruitless bound, and the fill-up with fresh samples.
  runs.push_back({"tiny gemm cpu", Make("gemm", "M=2,N=2,K=2"), TargetKind::kCpu, 20, 8});
  for (const auto& run : runs) {
    EvolutionConfig config = SmallConfig();
    config.num_threads = 1;
    const std::string one = Transcript(run.workload, run.target, config, run.n, run.rounds);
    EXPECT_NE(one.find('\n'), std::string::npos) << run.what;
    for (int threads : {2, 8}) {
      config.num_threads = threads;
      EXPECT_EQ(Transcript(run.workload, run.target, config, run.n, run.rounds), one)
          << run.what << ", " << threads << " threads";
    }
  }
}

TEST(RandomCostModel, DeterministicScoresInRange) {
  auto sch = RandomSchedule(Gemm(), TargetKind::kCpu, 1);
  ASSERT_TRUE(sch);
  std::vector<const tir::Schedule*> c(5, &*sch);
  auto a = costmodel::MakeRandomCostModel(3), b = costmodel::MakeRandomCostModel(3);
  EXPECT_EQ(a->Name(), "random");
  const auto sa = a->Predict(Gemm(), c);
  EXPECT_EQ(sa, b->Predict(Gemm(), c));
  ASSERT_EQ(sa.size(), 5u);
  for (double s : sa) {
    EXPECT_GE(s, 0.0);
    EXPECT_LT(s, 1.0);
  }
}

}  // namespace
}  // namespace autotune::search
