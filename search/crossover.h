// Crossover of two schedules' decisions: a child takes each sampling decision from one parent or
// the other. Ansor and MetaSchedule mutate only; crossover lets two good parents that are good for
// different reasons (say, one's thread tiles and the other's reduction tiles) combine.
#pragma once

#include <optional>

#include "tir/schedule/trace.h"
#include "support/random.h"

namespace autotune::search {

// Whether two traces are the same program up to their decisions: the same instructions (kinds,
// inputs, attributes, outputs) in the same order, so the same instructions are sampling ones.
bool SameStructure(const tir::Trace& a, const tir::Trace& b);
// A hash that is equal for traces of the same structure: which sketch a candidate comes from (a
// sketch's rules give the instructions; mutation and crossover change decisions only).
size_t StructureHash(const tir::Trace& trace);

// `a` with each sampling instruction's decision taken from `a` or `b` (uniformly, independently);
// nullopt when the parents do not have the same structure. The caller replays the child: it is a
// candidate like any other and may be invalid (e.g. too many threads per block).
std::optional<tir::Trace> Crossover(const tir::Trace& a, const tir::Trace& b, Random& rng);

}  // namespace autotune::search
