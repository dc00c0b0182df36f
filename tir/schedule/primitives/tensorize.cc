// tensorize: a loop of a stage and the loops inside it become one call of a tensor intrinsic
// (tir/analysis/tensor_intrinsics.h). Lowering checks that the tile's nest matches the intrinsic's
// description; a reduction's init at that loop becomes the intrinsic's init (mma: a zero fill).
#include <fmt/format.h>

#include "tir/analysis/tensor_intrinsics.h"
#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::Tensorize(LoopRV loop, const std::string& intrinsic) {
  auto where = Resolve(loop);
  if (!where) return where.error();
  if (state_.target != TargetKind::kCuda) return MakeError("tensorize: tensor intrinsics are cuda's");
  const TensorIntrinsic* in = FindTensorIntrinsic(intrinsic);
  if (!in) return MakeError(fmt::format("tensorize: unknown intrinsic '{}'", intrinsic));
  Stage& st = state_.stages[where->first];
  const int pos = st.LeafPosition(where->second);
  if (pos < 0) return MakeError("tensorize: the loop is not a leaf of its stage");
  if (st.leaves.size() - pos != in->extents.size()) {
    return MakeError(fmt::format("tensorize: {} covers the {} innermost loops of a stage; {} has {} from this loop in",
                                 in->name, in->extents.size(), st.name(), st.leaves.size() - pos));
  }
  for (size_t p = pos; p < st.leaves.size(); ++p) {
    const Iter& it = st.iters[st.leaves[p]];
    if (it.kind == ForKind::kThreadBinding || !it.tensorize.empty()) {
      return MakeError(fmt::format("tensorize: loop {} of the tile is bound or tensorized already", it.name));
    }
    if (HasAttachedStages(state_, where->first, st.leaves[p])) {
      return MakeError(fmt::format("tensorize: a stage is computed inside the tile, at loop {}", it.name));
    }
  }
  st.iters[where->second].tensorize = intrinsic;
  Record("tensorize", {Sym(loop)}, {{"intrinsic", intrinsic}}, {});
  return {};
}

InstructionKind TensorizeInstruction() {
  return {"tensorize", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto loop = replay::LoopAt(inst, 0, env);
            if (!loop) return loop.error();
            auto name = replay::Attr<std::string>(inst, "intrinsic");
            if (!name) return name.error();
            return sch.Tensorize(*loop, *name);
          }};
}

}  // namespace autotune::tir
