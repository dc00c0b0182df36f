#include "search/mutation.h"

#include <algorithm>
#include <utility>

#include "support/check.h"
#include "tir/schedule/perfect_tile.h"

namespace autotune::search {

using tir::Instruction;
using tir::Trace;

namespace {

std::vector<int64_t> DistinctPrimeFactors(int64_t n) {
  std::vector<int64_t> out = tir::PrimeFactors(n);  // smallest first, with repetition
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The tile sizes of a sample_perfect_tile decision, or nullopt if it is not a list of integers.
std::optional<std::vector<int64_t>> TileDecision(const Instruction& inst) {
  if (!inst.decision.is_array()) return std::nullopt;
  std::vector<int64_t> tiles;
  for (const auto& t : inst.decision) {
    if (!t.is_number_integer()) return std::nullopt;
    tiles.push_back(t.get<int64_t>());
  }
  return tiles;
}

class TileSizeMutator final : public Mutator {
 public:
  std::string Name() const override { return "tile_size"; }

  std::optional<Trace> Apply(const Trace& trace, Random& rng) const override {
    struct Move {
      int from;
      int64_t prime;
      int to;
    };
    // Every possible move of every tiling decision; the instruction is drawn first, so that a loop
    // with many prime factors is not mutated more often than one with few.
    std::vector<std::pair<size_t, std::vector<Move>>> options;
    const auto& insts = trace.instructions();
    for (size_t i : trace.SamplingInstructions()) {
      if (insts[i].kind != "sample_perfect_tile") continue;
      auto tiles = TileDecision(insts[i]);
      if (!tiles || tiles->size() < 2) continue;
      const int64_t max_inner = insts[i].attrs.value("max_innermost", int64_t{0});
      const int levels = static_cast<int>(tiles->size());
      std::vector<Move> moves;
      for (int from = 0; from < levels; ++from) {
        if ((*tiles)[from] <= 1) continue;
        for (int64_t p : DistinctPrimeFactors((*tiles)[from])) {
          for (int to = 0; to < levels; ++to) {
            if (to == from) continue;
            if (to == levels - 1 && max_inner > 0 && (*tiles)[to] * p > max_inner) continue;
            moves.push_back({from, p, to});
          }
        }
      }
      if (!moves.empty()) options.emplace_back(i, std::move(moves));
    }
    if (options.empty()) return std::nullopt;
    const auto& [index, moves] = options[rng.UniformInt(0, static_cast<int64_t>(options.size()) - 1)];
    const Move& m = moves[rng.UniformInt(0, static_cast<int64_t>(moves.size()) - 1)];
    std::vector<int64_t> tiles = *TileDecision(insts[index]);
    tiles[m.from] /= m.prime;
    tiles[m.to] *= m.prime;
    return trace.WithDecision(index, tiles);
  }
};

// Uniform over the indices 0 .. count - 1 other than `current` (count >= 2).
int64_t OtherIndex(int64_t count, int64_t current, Random& rng) {
  int64_t next = rng.UniformInt(0, count - 2);
  if (next >= current) ++next;
  return next;
}

// Whether the value sampled by instruction `index` is an input of an instruction of kind `kind`.
bool FeedsInstruction(const Trace& trace, size_t index, const std::string& kind) {
  const auto& insts = trace.instructions();
  for (const std::string& sym : insts[index].outputs) {
    for (size_t j = index + 1; j < insts.size(); ++j) {
      if (insts[j].kind != kind) continue;
      for (const auto& in : insts[j].inputs) {
        if (in.is_string() && in.get<std::string>() == sym) return true;
      }
    }
  }
  return false;
}

// The template samples both the unroll depth and the vector widths with sample_categorical; they are
// told apart by what uses the sampled value (annotate_unroll or a split), which does not depend on
// the candidate lists.
class CategoricalMutator final : public Mutator {
 public:
  CategoricalMutator(std::string name, std::string consumer) : name_(std::move(name)), consumer_(std::move(consumer)) {}
  std::string Name() const override { return name_; }

  std::optional<Trace> Apply(const Trace& trace, Random& rng) const override {
    const auto& insts = trace.instructions();
    std::vector<size_t> eligible;
    for (size_t i : trace.SamplingInstructions()) {
      const Instruction& inst = insts[i];
      if (inst.kind != "sample_categorical" || !inst.decision.is_number_integer()) continue;
      const auto it = inst.attrs.find("candidates");
      if (it == inst.attrs.end() || !it->is_array() || it->size() < 2) continue;
      if (FeedsInstruction(trace, i, consumer_)) eligible.push_back(i);
    }
    if (eligible.empty()) return std::nullopt;
    const size_t index = eligible[rng.UniformInt(0, static_cast<int64_t>(eligible.size()) - 1)];
    const int64_t count = static_cast<int64_t>(insts[index].attrs["candidates"].size());
    const int64_t current = insts[index].decision.get<int64_t>();
    return trace.WithDecision(index, OtherIndex(count, current, rng));
  }

 private:
  std::string name_;
  std::string consumer_;
};

// Moves a stage to another of its candidate compute locations (a sample_compute_location decision).
class ComputeLocationMutator final : public Mutator {
 public:
  std::string Name() const override { return "compute_location"; }
  std::optional<Trace> Apply(const Trace& trace, Random& rng) const override {
    const auto& insts = trace.instructions();
    std::vector<size_t> eligible;
    for (size_t i : trace.SamplingInstructions()) {
      if (insts[i].kind == "sample_compute_location" && insts[i].decision.is_number_integer() &&
          insts[i].inputs.size() >= 2) {
        eligible.push_back(i);
      }
    }
    if (eligible.empty()) return std::nullopt;
    const size_t index = eligible[rng.UniformInt(0, static_cast<int64_t>(eligible.size()) - 1)];
    return trace.WithDecision(index, OtherIndex(static_cast<int64_t>(insts[index].inputs.size()),
                                                insts[index].decision.get<int64_t>(), rng));
  }
};

}  // namespace

std::unique_ptr<Mutator> MakeTileSizeMutator() { return std::make_unique<TileSizeMutator>(); }
std::unique_ptr<Mutator> MakeUnrollMutator() {
  return std::make_unique<CategoricalMutator>("unroll", "annotate_unroll");
}
std::unique_ptr<Mutator> MakeVectorWidthMutator() {
  return std::make_unique<CategoricalMutator>("vector_width", "split");
}
std::unique_ptr<Mutator> MakeComputeLocationMutator() { return std::make_unique<ComputeLocationMutator>(); }

void MutatorRegistry::Register(std::unique_ptr<Mutator> mutator, double weight) {
  AUTOTUNE_CHECK(mutator != nullptr, "a registered mutator must not be null");
  AUTOTUNE_CHECK(weight >= 0, "mutator weights must be non-negative");
  AUTOTUNE_CHECK(Find(mutator->Name()) == nullptr, "mutator names must be unique");
  entries_.push_back({std::move(mutator), weight});
}

const Mutator* MutatorRegistry::Find(const std::string& name) const {
  for (const auto& e : entries_) {
    if (e.mutator->Name() == name) return e.mutator.get();
  }
  return nullptr;
}

std::optional<Trace> MutatorRegistry::Mutate(const Trace& trace, Random& rng, std::string* applied) const {
  std::vector<double> weights;
  for (const auto& e : entries_) weights.push_back(e.weight);
  for (;;) {
    double total = 0;
    for (double w : weights) total += w;
    if (total <= 0) return std::nullopt;
    const int i = rng.Categorical(weights);
    if (auto out = entries_[i].mutator->Apply(trace, rng)) {
      if (applied) *applied = entries_[i].mutator->Name();
      return out;
    }
    weights[i] = 0;  // nothing to change for this one: draw among the others
  }
}

void RegisterBuiltinMutators(MutatorRegistry& registry) {
  // The order is that of the weighted draw: changing it changes the candidates of a seed.
  registry.Register(MakeTileSizeMutator(), 0.75);
  registry.Register(MakeUnrollMutator(), 0.1);
  registry.Register(MakeVectorWidthMutator(), 0.1);
  registry.Register(MakeComputeLocationMutator(), 0.05);
}

const MutatorRegistry& BuiltinMutators() {
  static const MutatorRegistry registry = [] {
    MutatorRegistry r;
    RegisterBuiltinMutators(r);
    return r;
  }();
  return registry;
}

}  // namespace autotune::search
