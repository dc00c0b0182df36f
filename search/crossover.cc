#include "search/crossover.h"

#include <utility>

namespace autotune::search {

bool SameStructure(const tir::Trace& a, const tir::Trace& b) {
  const auto& x = a.instructions();
  const auto& y = b.instructions();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].kind != y[i].kind || x[i].outputs != y[i].outputs || x[i].inputs != y[i].inputs ||
        x[i].attrs != y[i].attrs || x[i].decision.is_null() != y[i].decision.is_null()) {
      return false;
    }
  }
  return true;
}

size_t StructureHash(const tir::Trace& trace) {
  size_t h = trace.size();
  const auto mix = [&h](const std::string& s) { h = h * 1000003u ^ std::hash<std::string>()(s); };
  for (const tir::Instruction& i : trace.instructions()) {
    mix(i.kind);
    mix(i.inputs.dump());
    mix(i.attrs.dump());
    for (const auto& o : i.outputs) mix(o);
    mix(i.decision.is_null() ? "-" : "+");
  }
  return h;
}

std::optional<tir::Trace> Crossover(const tir::Trace& a, const tir::Trace& b, Random& rng) {
  if (!SameStructure(a, b)) return std::nullopt;
  // One sampling instruction is one unit: the tile sizes of one loop multiply to its extent, so they
  // are exchanged together. Different instructions can be exchanged independently because in the
  // tiling template each decision is drawn for its own loop (or its own unroll / load width) with no
  // constraint tying it to another decision: any combination of valid decisions replays (it may
  // still exceed a GPU limit, which the search's validity check catches like for any mutation).
  tir::Trace child;
  for (size_t i = 0; i < a.size(); ++i) {
    tir::Instruction inst = a.instructions()[i];
    if (!inst.decision.is_null() && rng.UniformInt(0, 1) == 1) inst.decision = b.instructions()[i].decision;
    child.Append(std::move(inst));
  }
  return child;
}

}  // namespace autotune::search
