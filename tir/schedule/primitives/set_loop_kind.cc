#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"

namespace autotune::tir {

Result<void> SetLoopKind(ScheduleState& state, int stage, int iter, ForKind kind, ThreadTag tag) {
  Stage& st = state.stages[stage];
  Iter& it = st.iters[iter];
  if (it.is_reduce && kind != ForKind::kUnrolled && kind != ForKind::kSerial) {
    // Running reduction iterations concurrently would race on the accumulator.
    return MakeError(fmt::format("loop {} of {} is a reduction loop and cannot be {}", it.name, st.name(),
                                 kind == ForKind::kThreadBinding ? "bound to a thread" : ForKindName(kind)));
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
