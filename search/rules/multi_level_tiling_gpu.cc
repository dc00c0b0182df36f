// multi_level_tiling_gpu: SSSRRSRS tiling of the stage that writes the accumulators out. Its spatial
// loops are tiled at five levels [block, virtual thread, thread, inner, innermost (at most 16)] and
// bound to blockIdx.x, vthread and threadIdx.x (each level fused over the axes), except the leading
// axes that go to blocks whole (split-K's parts: partial sums of different parts share no data, so
// a block holding several would only multiply its shared memory); the accumulator is
// computed per thread, its reduction loops tiled at three levels and ordered R R S R S so that the
// outer reduction tile is where the shared copies are refilled.
#include <fmt/format.h>

#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"

namespace autotune::search {
namespace {

constexpr int64_t kMaxInnermostSpatial = 16;
// Reduction elements per axis and refill of the shared copies (middle x inner tile) in a sample.
// Mutation may exceed it: the validity check judges those.
constexpr int64_t kMaxReductionStep = 32;

class MultiLevelTilingGpu final : public ScheduleRule {
 public:
  std::string_view Name() const override { return "multi_level_tiling_gpu"; }
  bool AppliesTo(const tir::Schedule& fresh, const SketchRoles&) const override {
    return fresh.target() == tir::TargetKind::kCuda;
  }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    using tir::LoopRV;
    const SketchDecisions& d = ctx.decisions;
    AT_TRY(out_loops, sch.GetLoops(ctx.main_stage));
    const int ns = static_cast<int>(out_loops.size());
    std::vector<LoopRV> blocks, vthreads, threads, rests;
    std::vector<tir::IntRV> inner_factors;
    const int whole = std::min(ctx.block_only_axes, ns);
    for (int a = 0; a < whole; ++a) blocks.push_back(out_loops[a]);
    for (int a = whole; a < ns; ++a) {
      AT_TRY(extent, LoopExtent(sch, out_loops[a]));
      TileRequest req{false, a, ns, extent, 5, kMaxInnermostSpatial};
      AT_TRY(t, sch.SamplePerfectTile(out_loops[a], req.levels, req.max_innermost, d.tiles(req)));
      AT_TRY(parts, sch.Split(out_loops[a], {t[0], t[1], t[2], std::monostate{}}));
      blocks.push_back(parts[0]);
      vthreads.push_back(parts[1]);
      threads.push_back(parts[2]);
      rests.push_back(parts[3]);
      ctx.thread_factors.push_back(t[2]);
      inner_factors.push_back(t[4]);
    }
    std::vector<LoopRV> order = blocks;
    order.insert(order.end(), vthreads.begin(), vthreads.end());
    order.insert(order.end(), threads.begin(), threads.end());
    order.insert(order.end(), rests.begin(), rests.end());
    AT_TRY_VOID(sch.Reorder(order));
    AT_TRY(bx, FuseIfMany(sch, blocks));
    AT_TRY_VOID(sch.Bind(bx, tir::ThreadTag::kBlockIdxX));
    AT_TRY(vx, FuseIfMany(sch, vthreads));
    AT_TRY_VOID(sch.Bind(vx, tir::ThreadTag::kVThread));
    AT_TRY(tx, FuseIfMany(sch, threads));
    AT_TRY_VOID(sch.Bind(tx, tir::ThreadTag::kThreadIdxX));
    // Register accumulation per thread: R R S R S.
    AT_TRY_VOID(sch.ComputeAt(ctx.accumulator, tx));
    AT_TRY(ll, sch.GetLoops(ctx.accumulator));
    std::vector<LoopRV> s3, s4, r0, r1, r2;
    std::vector<LoopRV> lorder(ll.begin(), ll.begin() + whole);  // extent 1 in a thread
    for (int a = whole; a < ns; ++a) {
      AT_TRY(parts, sch.Split(ll[a], {std::monostate{}, inner_factors[a - whole]}));
      s3.push_back(parts[0]);
      s4.push_back(parts[1]);
    }
    const int nr = static_cast<int>(ll.size()) - ns;
    for (int r = 0; r < nr; ++r) {
      AT_TRY(extent, LoopExtent(sch, ll[ns + r]));
      TileRequest req{true, r, nr, extent, 3, 0};
      AT_TRY(t, sch.SamplePerfectTile(ll[ns + r], req.levels, req.max_innermost, d.tiles(req)));
      AT_TRY(middle, sch.Resolve(t[1]));
      AT_TRY(inner, sch.Resolve(t[2]));
      if (middle * inner > kMaxReductionStep) {
        // Rejected before anything is lowered: most such samples overflow shared memory.
        return MakeError(fmt::format("a reduction step of {} exceeds {}", middle * inner, kMaxReductionStep));
      }
      AT_TRY(parts, sch.Split(ll[ns + r], {t[0], t[1], t[2]}));
      r0.push_back(parts[0]);
      r1.push_back(parts[1]);
      r2.push_back(parts[2]);
    }
    lorder.insert(lorder.end(), r0.begin(), r0.end());
    for (auto* group : {&r1, &s3, &r2, &s4}) lorder.insert(lorder.end(), group->begin(), group->end());
    AT_TRY_VOID(sch.Reorder(lorder));
    ctx.block_loop = bx;
    ctx.thread_loop = tx;
    if (r0.empty()) return MakeError("the tiled stage has no reduction loop");
    ctx.reduce_outer = r0.back();
    ctx.tiled = true;
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeMultiLevelTilingGpuRule() { return std::make_unique<MultiLevelTilingGpu>(); }

}  // namespace autotune::search
