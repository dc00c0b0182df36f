// Evolutionary search over the schedules of one workload on one target (Ansor/MetaSchedule style,
// plus crossover): a population of valid schedules (the best measured ones from this job and the
// database, plus fresh samples of the schedule space) evolves for a few generations by mutation of
// its sampling decisions (tile sizes, unroll depth, vector width) and crossover of two parents'
// decisions, with parents picked in proportion to the cost model's score. Every candidate is a trace
// replayed on a fresh state (docs/DESIGN.md convention 7) and checked (lowering; the GPU validity
// check for cuda) before it is scored. A batch is the best-scored candidates never measured on this
// target (a few of each family at most) plus an epsilon-greedy share of random ones. The pure part
// of each candidate (breeding or sampling, hashing, replay, lowering, the validity check) runs on a
// few threads, a chunk of candidates at a time: the calling thread draws one seed or forks one
// engine per candidate, in order, and merges the results in order.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "costmodel/cost_model.h"
#include "tir/ops/workload.h"
#include "tir/schedule/schedule.h"
#include "support/random.h"

namespace autotune::search {

using costmodel::CostModel;  // what ranks the candidates (costmodel/cost_model.h)

struct EvolutionConfig {
  int population = 2048;         // candidates per generation
  int generations = 4;           // generations per proposed batch
  double mutation_prob = 0.85;   // a child is mutated (else copied or crossed over)
  double crossover_prob = 0.25;  // a child is the crossover of two parents (before mutation)
  double eps_greedy = 0.05;      // share of a batch picked at random among the valid new candidates
  int seeds_from_measured = 64;  // best measured schedules put into the initial population
  // The model's picks of a batch take at most this many candidates of one family (cuda: the same
  // threads per block, shared memory and local arrays, i.e. the same block shape and tiles, differing
  // in unrolling, vector widths or loop order); the rest go to the next families by score (0: no
  // cap). Without it a job can settle in one family and spend its last rounds there. Not applied on
  // cpu (there every program is its own family).
  int max_per_family = 8;
  // Every generation keeps the best-scored min_per_sketch candidates of every sketch (traces of one
  // structure, search/crossover.h) among its parents, and the model's picks of a batch start with
  // them, so that a start model sure of one sketch does not keep the job from measuring (and its own
  // model from learning) the others. It costs at most this many of a batch per sketch the model does not
  // favour; a workload of one sketch searches exactly as without it. 0: off.
  int min_per_sketch = 4;
  // The sketches searched, by name (search/sketch.h); empty: those searched by default.
  std::vector<std::string> sketches;
  // cuda: a candidate whose fully unrolled code (tir::GpuUsage::unrolled_statements) exceeds this is
  // invalid to the search, so it is never compiled. Such kernels are never near the best and mostly
  // run into the build timeout, taking compile time from the other candidates.
  int64_t max_unrolled_statements = 3072;
  // Candidates are told apart by their lowered program, not only by their trace: of two traces that
  // lower to the same program only the first is admitted, and a program proposed once is not proposed
  // again by this search. (Without it, a good share of a job's trials measure a kernel already
  // measured under another trace.) false: by trace only.
  bool distinct_programs = true;
  // Threads that sample, replay, lower and check candidates (the search's real cost) in parallel; 0:
  // UsableCores(). Each candidate's random choices come from its own engine,
  // made in candidate order, so the batches are the same for any thread count.
  int num_threads = 0;
};

// A schedule to measure, and its trace's identity.
struct Candidate {
  tir::Schedule schedule;
  std::string trace_hash;  // IdentityOf(schedule.trace()).hash (search/measure_record.h)
  double score = 0;        // the cost model's, 0 for an epsilon-greedy pick
};

class EvolutionarySearch {
 public:
  EvolutionarySearch(const tir::Workload& workload, tir::Target target, EvolutionConfig config, uint64_t seed);

  // Up to `n` distinct candidates whose trace hashes are not in `measured` (and with distinct_programs,
  // whose programs differ from each other's and from those of every candidate this search returned
  // before, or was told of by MarkProposed; fresh samples that fill a batch the population could not
  // are checked against each other only); fewer (maybe none) when the space has no more.
  // `best_measured` are the fastest measured schedules so far (fastest first), which seed the
  // population. Without them and with a model that does not steer yet (CostModel::Steers), the
  // population is a quarter of the configured one. Deterministic for a seed, the same inputs and the
  // same model scores.
  std::vector<Candidate> NextBatch(int n, CostModel& model, const std::unordered_set<std::string>& measured,
                                   const std::vector<tir::Schedule>& best_measured);

  // A candidate proposed by someone else (the tuner's default schedules): with distinct_programs its
  // program is not proposed by this search.
  void MarkProposed(const tir::Schedule& schedule);

  // A schedule from outside this search's space walk (a trace of another shape replayed on this
  // workload, search/transfer_seeds.h): true when it passes the search's own checks (it lowers; on
  // cuda, the GPU validity check with the cap on unrolled code) and, with distinct_programs, its
  // program was not proposed before; it is then marked proposed. A false one is never measured.
  bool Adopt(const tir::Schedule& schedule);

  // Counters for progress and tests.
  struct Stats {
    int64_t sampled = 0;    // fresh samples drawn
    int64_t mutated = 0;    // children made by mutation
    int64_t crossed = 0;    // children made by crossover
    int64_t invalid = 0;    // candidates dropped by replay, lowering or the validity check
    int64_t same_program = 0;  // valid candidates dropped: their program was admitted or proposed before
  };
  const Stats& stats() const { return stats_; }

 private:
  class Pool;         // what one NextBatch has seen and admitted (evolutionary_search.cc)
  struct Population;  // valid candidates and their model scores, best first
  struct Batch;       // the candidates a NextBatch picked so far

  // The passes of NextBatch, in order (evolutionary_search.cc tells more of each).
  // The population of a generation: a quarter of the configured one while the search is blind.
  size_t PopulationSize(int n, const CostModel& model, const std::vector<tir::Schedule>& best_measured) const;
  // The best measured schedules, then fresh samples; scored, best first.
  Population InitialPopulation(Pool& pool, CostModel& model, size_t population,
                               const std::vector<tir::Schedule>& best_measured);
  // config_.generations of selection and breeding (BreedChildren: one generation's children).
  void Evolve(Pool& pool, CostModel& model, size_t population, Population& pop);
  Population BreedChildren(Pool& pool, const Population& parents, size_t population);
  // The batch: the model's picks, the epsilon-greedy share, and fresh samples for what is missing.
  void PickByModel(const Population& pop, int n, int model_picks, const std::unordered_set<std::string>& measured,
                   Batch& batch) const;
  void PickAtRandom(const Pool& pool, int n, const std::unordered_set<std::string>& measured, Batch& batch);
  void FillWithSamples(Pool& pool, int n, size_t population, const std::unordered_set<std::string>& measured,
                       Batch& batch);
  // Whether an earlier NextBatch (or MarkProposed, Adopt) proposed this program (distinct_programs).
  bool ProposedBefore(size_t code_hash) const;

  tir::Workload workload_;
  tir::Target target_;
  EvolutionConfig config_;
  Random rng_;
  Stats stats_;
  std::unordered_set<size_t> proposed_programs_;  // code hashes of every candidate returned so far
};

}  // namespace autotune::search
