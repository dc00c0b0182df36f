#include "tir/schedule/naive_gpu_schedule.h"

#include <algorithm>

namespace autotune::tir {

namespace {

constexpr int64_t kLongSum = 4096;

// Splits a sum longer than kLongSum over its first reduction axis into partial sums of at most
// kLongSum terms where that axis allows (rfactor); the stage then sums the parts.
Result<void> SplitLongSum(Schedule& sch, const te::Operation op) {
  const auto* reduce = As<ReduceNode>(op->body);
  if (!reduce || reduce->combiner != ReduceOp::kSum) return {};
  int64_t terms = 1;
  for (const auto& a : op->reduce_axis) terms *= a.extent;
  const int64_t first = op->reduce_axis[0].extent;
  int64_t parts = 1;
  while (terms / parts > kLongSum && parts * 2 <= first) parts *= 2;
  if (parts == 1) return {};
  auto stage = sch.GetStage(op->name);
  if (!stage) return stage.error();
  auto loops = sch.GetLoops(*stage);
  if (!loops) return loops.error();
  auto split = sch.Split((*loops)[op->axis.size()], {parts, std::monostate{}});
  if (!split) return split.error();
  auto rf = sch.RFactor(*stage, (*split)[0]);
  if (!rf) return rf.error();
  return {};
}

}  // namespace

Result<Schedule> NaiveGpuSchedule(const Workload& workload) {
  Schedule sch(workload, TargetKind::kCuda);
  for (int id : std::vector<int>(sch.state().order)) {
    if (auto r = SplitLongSum(sch, sch.state().stages[id].op); !r) return r.error();
  }
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
