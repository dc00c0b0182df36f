#include "search/thread_workload.h"

#include "tir/ops/operator.h"

namespace autotune::search {

std::shared_ptr<const tir::Workload> RebuiltWorkload(const tir::Workload& w) {
  if (!w.dag) return nullptr;
  auto rebuilt = tir::MakeWorkload(w.op, tir::ShapeText(w.shape), w.epilogue, w.TypeName());
  if (!rebuilt || !rebuilt->dag || rebuilt->KeyText() != w.KeyText()) return nullptr;
  return std::make_shared<const tir::Workload>(std::move(rebuilt).value());
}

const tir::Workload& ThreadWorkload(const tir::Workload& w) {
  // Keyed by the compute definition's control block, which the weak reference keeps (so another
  // definition made later cannot have its address); compared without touching its counts.
  thread_local std::weak_ptr<const tir::te::ComputeDAG> source;
  thread_local std::shared_ptr<const tir::Workload> copy;
  if (!w.dag) return w;
  if (source.owner_before(w.dag) || w.dag.owner_before(source)) {
    copy = RebuiltWorkload(w);
    source = w.dag;
  }
  return copy ? *copy : w;
}

}  // namespace autotune::search
