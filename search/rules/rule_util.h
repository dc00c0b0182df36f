// Small helpers the schedule rules share.
#pragma once

#include <vector>

#include "tir/result.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

// The loops fused into one, or the loop itself when there is one.
inline Result<tir::LoopRV> FuseIfMany(tir::Schedule& sch, const std::vector<tir::LoopRV>& loops) {
  if (loops.size() == 1) return loops[0];
  return sch.Fuse(loops);
}

// The current extent of a loop (its handle must be valid).
inline Result<int64_t> LoopExtent(const tir::Schedule& sch, tir::LoopRV loop) {
  AT_TRY(where, sch.Resolve(loop));
  return sch.state().stages[where.first].iters[where.second].extent;
}

// Uniform over `candidates` unless `decide` picks one.
template <class Decider>
Result<tir::IntRV> SampleChoice(tir::Schedule& sch, const std::vector<int64_t>& candidates, const Decider& decide) {
  std::vector<double> probs(candidates.size(), 1.0 / static_cast<double>(candidates.size()));
  return sch.SampleCategorical(candidates, probs, decide(candidates));
}

}  // namespace autotune::search
