#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"

namespace autotune::tir {

Result<void> SetLoopKind(ScheduleState& state, int stage, int iter, ForKind kind, ThreadTag tag) {
  Stage& st = state.stages[stage];
  Iter& it = st.iters[iter];
  const bool cross_thread = it.is_reduce && kind == ForKind::kThreadBinding && IsThreadTag(tag);
  if (cross_thread) {
    // Lowering combines the threads' partial results through shared memory: one such loop a stage.
    for (int other : st.leaves) {
      if (other != iter && st.iters[other].is_reduce && st.iters[other].kind == ForKind::kThreadBinding) {
        return MakeError(fmt::format("stage {} already binds its reduction loop {} to a thread", st.name(),
                                     st.iters[other].name));
      }
    }
  }
  // On the CPU a vectorized reduction loop gets one accumulator per lane (omp simd reduction).
  const bool simd_reduction = it.is_reduce && kind == ForKind::kVectorized && state.target == TargetKind::kCpu;
  if (it.is_reduce && !cross_thread && !simd_reduction && kind != ForKind::kUnrolled && kind != ForKind::kSerial) {
    // Running reduction iterations concurrently would race on the accumulator.
    return MakeError(fmt::format("loop {} of {} is a reduction loop and cannot be {}", it.name, st.name(),
                                 kind == ForKind::kThreadBinding ? "bound to a block or virtual thread" : ForKindName(kind)));
  }
  if (it.kind == ForKind::kThreadBinding && kind != ForKind::kThreadBinding) {
    return MakeError(fmt::format("loop {} of {} is bound to {}", it.name, st.name(), ThreadTagName(it.tag)));
  }
  if (kind == ForKind::kThreadBinding) {
    for (int other : st.leaves) {
      if (other != iter && st.iters[other].tag == tag) {
        return MakeError(fmt::format("stage {} already binds loop {} to {}", st.name(), st.iters[other].name,
                                     ThreadTagName(tag)));
      }
    }
  }
  it.kind = kind;
  it.tag = tag;
  return {};
}

}  // namespace autotune::tir
