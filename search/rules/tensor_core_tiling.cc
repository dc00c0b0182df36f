// tensor_core_tiling: the cuda.tensor_core sketch's one rule (search/tensor_core_schedule.h), its
// factors sampled among those that divide the product's (padded) shape and fit the GPU: at most 16 warps a
// block, at most 32 accumulator tiles (128 registers) a warp, at most 48 KB of shared copies a
// chunk; the copies pipelined 1 (not at all) to 4 chunks deep, within 227 KB; consecutive blocks
// grouped 1-16 block rows deep (L2 reuse). After split_k
// (cuda.tensor_core_split_k) it tiles the partial sums, the parts one more batch axis.
#include <fmt/format.h>

#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"
#include "search/tensor_core_schedule.h"

namespace autotune::search {
namespace {

// The most shared memory a block may opt into on sm_90 (232,448 bytes).
constexpr int64_t kMaxSharedBytes = 227 * 1024;

// The candidates that leave `extent` divisible by `unit` times the candidate.
std::vector<int64_t> Dividing(std::vector<int64_t> candidates, int64_t extent, int64_t unit) {
  std::erase_if(candidates, [&](int64_t c) { return extent % (unit * c) != 0; });
  return candidates;
}

class TensorCoreTilingRule final : public CudaRule {
 public:
  std::string_view Name() const override { return "tensor_core_tiling"; }
  std::vector<std::string_view> Marks() const override { return {"set_scope", "cache_read", "tensorize"}; }
  std::vector<std::string_view> OptionalMarks() const override { return {"cache_write", "matrix_form"}; }
  bool AppliesTo(const tir::Schedule& fresh, const SketchRoles& roles) const override {
    return TensorCoreShape(fresh, roles).ok();
  }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    AT_TRY(raw, TensorCoreShape(sch, ctx.roles));
    const MmaShape s = PaddedShape(raw);
    const SketchDecisions& d = ctx.decisions;
    AT_TRY(warps_m, Pick(sch, Dividing({1, 2, 4}, s.m, 16), d.mma_warps));
    AT_TRY(warps_n, Pick(sch, Dividing({1, 2, 4}, s.n, 8), d.mma_warps));
    const int64_t wm = *sch.Resolve(warps_m), wn = *sch.Resolve(warps_n);
    AT_TRY(tiles_m, Pick(sch, Dividing({1, 2, 4, 8}, s.m, 16 * wm), d.mma_tiles));
    std::vector<int64_t> tn = Dividing({1, 2, 4, 8}, s.n, 8 * wn);
    const int64_t tm = *sch.Resolve(tiles_m);
    std::erase_if(tn, [&](int64_t c) { return tm * c > 32; });
    AT_TRY(tiles_n, Pick(sch, tn, d.mma_tiles));
    // Shared bytes per step of the reduction: the block's A rows and B columns.
    const int64_t bm = wm * tm * 16, bn = wn * *sch.Resolve(tiles_n) * 8;
    const int64_t step_bytes = s.element_bytes * s.step() * (bm + bn);
    // float32 steps are 8 deep: up to 8 of them make a chunk of the same bytes as 4 16-bit steps.
    std::vector<int64_t> ks = Dividing(s.element_bytes == 2 ? std::vector<int64_t>{1, 2, 4} : std::vector<int64_t>{1, 2, 4, 8},
                                       s.k, s.step());
    std::erase_if(ks, [&](int64_t c) { return c > 1 && c * step_bytes > 48 * 1024; });
    AT_TRY(k_steps, Pick(sch, ks, d.mma_k_steps));
    // Pipeline stages: each holds a chunk of A and B (rows padded), all within a block's shared
    // memory on sm_90 (the build refuses more than a device has: sm_80 163 KB).
    const int64_t chunk_bytes = ChunkSharedBytes(s, bm, bn, *sch.Resolve(k_steps) * s.step());
    std::vector<int64_t> stages = {1, 2, 3, 4};
    std::erase_if(stages, [&](int64_t n) { return n > 1 && n * chunk_bytes > kMaxSharedBytes; });
    AT_TRY(pipeline, Pick(sch, stages, d.mma_stages));
    // Groups of block rows: only where there are several block columns to share B's across.
    std::vector<int64_t> groups = {1};
    if (s.n > bn) groups = Dividing({1, 2, 4, 8, 16}, s.m, bm);
    AT_TRY(group, Pick(sch, groups, d.mma_block_group));
    TensorCoreFactors factors{warps_m, warps_n, tiles_m, tiles_n, k_steps, pipeline, std::nullopt, false, group};
    // A matrix form's B copy may gather (an im2col tile): 16-byte vectors, or lanes on neighbours.
    if (raw.matrix_form) {
      AT_TRY(vector, Pick(sch, {1, 2, 16 / s.element_bytes}, d.mma_copy_vector));
      factors.b_copy_vector = vector;
      AT_TRY(rows, Pick(sch, {0, 1}, d.mma_b_rows));
      factors.b_n_rows = *sch.Resolve(rows) == 1;
    }
    // After split_k the tiles store float32 partial sums (a workspace), which combine_partials sums
    // and passes through the epilogue: the tiling has no epilogue of its own.
    SketchRoles tiled = ctx.roles;
    if (!tiled.combine.empty()) tiled.epilogue.clear();
    AT_TRY_VOID(ApplyTensorCoreTiling(sch, tiled, raw, factors));
    ctx.tiled = true;
    return {};
  }

 private:
  static Result<tir::IntRV> Pick(tir::Schedule& sch, const std::vector<int64_t>& candidates, const ChoiceDecider& d) {
    if (candidates.empty()) return MakeError("tensor_core_tiling: no factor fits the shape");
    return SampleChoice(sch, candidates, d);
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeTensorCoreTilingRule() { return std::make_unique<TensorCoreTilingRule>(); }

}  // namespace autotune::search
