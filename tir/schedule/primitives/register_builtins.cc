#include "tir/schedule/primitives/primitives.h"

#include <fmt/format.h>

namespace autotune::tir {

bool HasAttachedStages(const ScheduleState& state, int stage, int iter) {
  for (int id : state.order) {
    const Stage& st = state.stages[id];
    if ((st.attach == AttachKind::kAt || st.attach == AttachKind::kReverseAt) && st.attach_stage == stage &&
        st.attach_iter == iter) {
      return true;
    }
  }
  return false;
}

std::string UniqueStageName(const ScheduleState& state, const std::string& base) {
  std::string name = base;
  for (int n = 1;; ++n) {
    bool taken = false;
    for (const auto& st : state.stages) taken |= st.name() == name;
    for (const auto& in : state.inputs) taken |= in->name == name;
    if (!taken) return name;
    name = fmt::format("{}{}", base, n);
  }
}

// Explicit, in one place: static-initializer registration silently vanishes from static libraries.
void RegisterBuiltinInstructions(InstructionRegistry& r) {
  r.Register(GetStageInstruction());
  r.Register(GetLoopsInstruction());
  r.Register(SplitInstruction());
  r.Register(ReorderInstruction());
  r.Register(FuseInstruction());
  r.Register(BindInstruction());
  r.Register(UnrollInstruction());
  r.Register(VectorizeInstruction());
  r.Register(ParallelInstruction());
  r.Register(AnnotateUnrollInstruction());
  r.Register(CacheReadInstruction());
  r.Register(CacheWriteInstruction());
  r.Register(ComputeAtInstruction());
  r.Register(ReverseComputeAtInstruction());
  r.Register(ComputeRootInstruction());
  r.Register(ComputeInlineInstruction());
  r.Register(ReverseComputeInlineInstruction());
  r.Register(StorageAlignInstruction());
  r.Register(ReorderStorageInstruction());
  r.Register(SetScopeInstruction());
  r.Register(DoubleBufferInstruction());
  r.Register(PipelineInstruction());
  r.Register(RFactorInstruction());
  r.Register(ReIndexInstruction());
  r.Register(TensorizeInstruction());
  r.Register(PadEinsumInstruction());
  r.Register(MatrixFormInstruction());
  r.Register(PackInputInstruction());
  r.Register(SamplePerfectTileInstruction());
  r.Register(SampleCategoricalInstruction());
  r.Register(SampleComputeLocationInstruction());
}

}  // namespace autotune::tir
