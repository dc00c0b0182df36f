// reorder_storage: the order in which a stage's buffer lays out its dimensions (Halide's
// reorder_storage), outermost first; indices are unchanged, only the strides follow the order. A
// local copy or accumulator whose innermost loop is vectorized along a dimension that is not the
// buffer's last (a convolution's output channels, weights read per channel) gets that dimension
// last, so the vector's lanes lie side by side.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::ReorderStorage(StageRV stage, const std::vector<int64_t>& order) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  Stage& st = state_.stages[*s];
  const size_t rank = st.op->shape.size();
  std::vector<int64_t> sorted = order, identity(rank);
  std::sort(sorted.begin(), sorted.end());
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity) {
    return MakeError(fmt::format("reorder_storage: {} is not an order of the {} dimensions of {}", fmt::join(order, ","),
                                 rank, st.name()));
  }
  if (st.is_output || st.scope == Scope::kGlobal) return MakeError("reorder_storage applies to shared or local buffers");
  if (!st.aligns.empty()) return MakeError(fmt::format("reorder_storage: {} is storage-aligned", st.name()));
  st.storage_order = order;
  Record("reorder_storage", {Sym(stage)}, {{"order", order}}, {});
  return {};
}

InstructionKind ReorderStorageInstruction() {
  return {"reorder_storage", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            auto order = replay::Attr<std::vector<int64_t>>(inst, "order");
            if (!order) return order.error();
            return sch.ReorderStorage(*s, *order);
          }};
}

}  // namespace autotune::tir
