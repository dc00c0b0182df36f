// storage_align: pads the row stride of one dimension of a stage's buffer to factor * k + offset
// elements, the usual cure for shared-memory bank conflicts.
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::StorageAlign(StageRV stage, int dim, int64_t factor, int64_t offset) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  Stage& st = state_.stages[*s];
  const int rank = static_cast<int>(st.op->shape.size());
  // The dimension innermost in memory (the last declared, or reorder_storage's last) has unit stride.
  const int innermost = st.storage_order.empty() ? rank - 1 : static_cast<int>(st.storage_order.back());
  if (dim < 0 || dim >= rank || dim == innermost) {
    return MakeError(fmt::format("storage_align: dimension {} of the {}-d buffer {} has no stride to pad", dim, rank, st.name()));
  }
  if (factor < 1 || offset < 0 || offset >= factor) return MakeError("storage_align needs factor >= 1 and 0 <= offset < factor");
  if (st.is_output || st.scope == Scope::kGlobal) return MakeError("storage_align applies to shared or local buffers");
  for (auto& a : st.aligns) {
    if (a.dim == dim) return MakeError(fmt::format("dimension {} of {} is aligned already", dim, st.name()));
  }
  st.aligns.push_back({dim, factor, offset});
  Record("storage_align", {Sym(stage)}, {{"dim", dim}, {"factor", factor}, {"offset", offset}}, {});
  return {};
}

InstructionKind StorageAlignInstruction() {
  return {"storage_align", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            auto dim = replay::Attr<int>(inst, "dim");
            auto factor = replay::Attr<int64_t>(inst, "factor");
            auto offset = replay::Attr<int64_t>(inst, "offset");
            if (!dim) return dim.error();
            if (!factor) return factor.error();
            if (!offset) return offset.error();
            return sch.StorageAlign(*s, *dim, *factor, *offset);
          }};
}

}  // namespace autotune::tir
