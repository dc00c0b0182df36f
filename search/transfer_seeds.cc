#include "search/transfer_seeds.h"

#include <algorithm>
#include <map>

#include "tir/schedule/replay_on_shape.h"
#include "tir/schedule/trace.h"

namespace autotune::search {

std::vector<TransferredSchedule> NearestShapeSchedules(const tir::Workload& workload, tir::Target target,
                                                       const std::vector<db::TuningRecord>& others) {
  struct Neighbour {
    bool other_epilogue;
    double distance;
    std::vector<const db::TuningRecord*> records;  // fastest first
  };
  std::map<std::string, Neighbour> by_key;
  // Another element type is other evidence (and other stages): only records of this one transfer.
  const std::string dtype = workload.TypeName();
  for (const db::TuningRecord& r : others) {
    if (r.workload.op != workload.op || r.workload.dtype != dtype || r.workload.key == workload.Key() || !r.valid() ||
        !(r.median_ms > 0)) {
      continue;
    }
    auto [it, inserted] = by_key.try_emplace(r.workload.key);
    if (inserted) {
      it->second.other_epilogue = r.workload.epilogue != workload.epilogue;
      it->second.distance = tir::ShapeDistance(workload.shape, r.workload.shape);
    }
    it->second.records.push_back(&r);
  }
  std::vector<Neighbour*> nearest;
  for (auto& [key, n] : by_key) {
    std::stable_sort(n.records.begin(), n.records.end(),
                     [](const db::TuningRecord* a, const db::TuningRecord* b) { return a->median_ms < b->median_ms; });
    nearest.push_back(&n);
  }
  // Ties in distance keep the key order of the map, so the choice does not depend on record order.
  std::stable_sort(nearest.begin(), nearest.end(), [](const Neighbour* a, const Neighbour* b) {
    return a->other_epilogue != b->other_epilogue ? !a->other_epilogue : a->distance < b->distance;
  });
  if (nearest.size() > static_cast<size_t>(kTransferShapes)) nearest.resize(kTransferShapes);

  std::vector<TransferredSchedule> out;
  for (int rank = 0; rank < kTransferPerShape; ++rank) {
    for (const Neighbour* n : nearest) {
      if (rank >= static_cast<int>(n->records.size())) continue;
      const db::TuningRecord& r = *n->records[rank];
      auto trace = tir::Trace::FromJsonText(r.trace_json);
      if (!trace) continue;
      auto sch = tir::ReplayOnShape(workload, target, *trace);
      if (!sch) continue;
      out.push_back(TransferredSchedule{std::move(sch).value(), r.workload.CanonicalText(), r.median_ms});
    }
  }
  return out;
}

}  // namespace autotune::search
