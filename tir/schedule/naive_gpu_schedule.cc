#include "tir/schedule/naive_gpu_schedule.h"

#include <algorithm>

namespace autotune::tir {

Result<Schedule> NaiveGpuSchedule(const Workload& workload) {
  Schedule sch(workload, TargetKind::kCuda);
  const std::vector<int> order = sch.state().order;
  for (int id : order) {
    const Stage& st = sch.state().stages[id];
    const size_t spatial = st.op->axis.size();
    auto stage = sch.GetStage(st.name());
    if (!stage) return stage.error();
    auto loops = sch.GetLoops(*stage);
    if (!loops) return loops.error();
    std::vector<LoopRV> outputs(loops->begin(), loops->begin() + spatial);
    LoopRV fused = outputs[0];
    if (outputs.size() > 1) {
      auto f = sch.Fuse(outputs);
      if (!f) return f.error();
      fused = *f;
    }
    auto where = sch.Resolve(fused);
    if (!where) return where.error();
    const int64_t extent = sch.state().stages[where->first].iters[where->second].extent;
    auto parts = sch.Split(fused, {std::monostate{}, std::min<int64_t>(256, extent)});
    if (!parts) return parts.error();
    if (auto r = sch.Bind((*parts)[0], ThreadTag::kBlockIdxX); !r) return r.error();
    if (auto r = sch.Bind((*parts)[1], ThreadTag::kThreadIdxX); !r) return r.error();
  }
  return sch;
}

}  // namespace autotune::tir
