// Small helpers the schedule rules share.
#pragma once

#include <vector>

#include "support/result.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

// The root extents of a stage: its output axes, their product, the reduction's product and the
// outermost reduction axis (0 without a reduction).
struct StageShape {
  std::vector<int64_t> spatial;
  int64_t outputs = 1, reduction = 1, first_reduce = 0;
};
inline StageShape ShapeOf(const tir::Stage& st) {
  StageShape s;
  for (int id : st.root) {
    const tir::Iter& it = st.iters[id];
    if (it.is_reduce) {
      if (s.first_reduce == 0) s.first_reduce = it.extent;
      s.reduction *= it.extent;
    } else {
      s.spatial.push_back(it.extent);
      s.outputs *= it.extent;
    }
  }
  return s;
}

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
