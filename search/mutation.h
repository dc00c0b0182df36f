// Mutators: small changes to one sampling decision of a trace (docs/DESIGN.md convention 7: a
// mutator only replaces a decision with Trace::WithDecision; the search replays the result and
// drops it if it does not replay, lower or fit the GPU). Each mutator is a small class behind the
// Mutator interface; the built-ins are registered explicitly with their weights, and the order of
// registration is data (it is the order of the weighted draw, so it fixes the search's choices for
// a seed).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tir/schedule/trace.h"
#include "support/random.h"

namespace autotune::search {

class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual std::string Name() const = 0;
  // A copy of `trace` with exactly one decision changed, or nullopt when the trace has nothing this
  // mutator can change (no instruction of its kind, or every such decision has a single value).
  virtual std::optional<tir::Trace> Apply(const tir::Trace& trace, Random& rng) const = 0;
};

// Moves one prime factor of one level of a sample_perfect_tile decision to another level (the
// product, i.e. the loop extent, is kept), never making the innermost level exceed max_innermost.
std::unique_ptr<Mutator> MakeTileSizeMutator();
// Picks another candidate of the sample_categorical that sets the auto-unroll depth (the one whose
// value feeds annotate_unroll).
std::unique_ptr<Mutator> MakeUnrollMutator();
// Picks another candidate of a sample_categorical whose value is a split factor: the cooperative
// loads' width on cuda, and also split-K's part count and the combine kernel's threads.
std::unique_ptr<Mutator> MakeVectorWidthMutator();
// Picks another candidate loop of a sample_compute_location (where a shared copy is computed).
std::unique_ptr<Mutator> MakeComputeLocationMutator();

// The mutators in use, each with a non-negative weight (its share of the mutations).
class MutatorRegistry {
 public:
  struct Entry {
    std::unique_ptr<Mutator> mutator;
    double weight = 1;
  };
  void Register(std::unique_ptr<Mutator> mutator, double weight);
  const std::vector<Entry>& entries() const { return entries_; }
  const Mutator* Find(const std::string& name) const;

  // Applies one mutator drawn by weight; when it has nothing to change, draws again among the rest.
  // nullopt when no mutator with a positive weight applies. `applied` (may be null) gets its name.
  std::optional<tir::Trace> Mutate(const tir::Trace& trace, Random& rng, std::string* applied = nullptr) const;

 private:
  std::vector<Entry> entries_;
};

// Tile sizes 0.75, unroll 0.1, vector width 0.1, compute location 0.05 (MetaSchedule's cuda defaults
// are 0.9 tile size and 0.08 unroll: the tiles decide the data reuse, so most mutations go there).
void RegisterBuiltinMutators(MutatorRegistry& registry);
// The registry with the built-ins (built on first use by RegisterBuiltinMutators).
const MutatorRegistry& BuiltinMutators();

}  // namespace autotune::search
