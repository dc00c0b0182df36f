#include "search/default_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "search/rules/rule_util.h"
#include "search/rules/schedule_rule.h"
#include "search/tensor_core_schedule.h"
#include "tir/analysis/gpu_validity.h"
#include "tir/analysis/matrix_axes.h"
#include "tir/lower/lower.h"

namespace autotune::search {

using namespace autotune::tir;

namespace {

// The index of the largest candidate at most `cap` (the first candidate when none is).
ChoiceDecider LargestUpTo(int64_t cap) {
  return [cap](const std::vector<int64_t>& c) -> std::optional<int64_t> {
    int64_t pick = 0;
    for (size_t i = 0; i < c.size(); ++i) pick = c[i] <= cap ? static_cast<int64_t>(i) : pick;
    return pick;
  };
}

// Largest divisor of n that is at most cap.
int64_t DivisorAtMost(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// cpu.registers' register rows: gemm's and batch_matmul's M (the axis before the vectorized one); a
// convolution's output channels (axis 1 of N, K, ...), which share each input vector loaded.
int RegisterRowsAxis(int num_axes) { return num_axes >= 4 ? 1 : num_axes - 2; }

// Fills levels from the innermost outward with the given caps; the outermost level takes the rest.
std::vector<int64_t> Fill(int64_t extent, const std::vector<int64_t>& caps_inner_first, int levels) {
  std::vector<int64_t> t(levels, 1);
  int64_t rest = extent;
  for (size_t i = 0; i < caps_inner_first.size() && static_cast<int>(i) < levels - 1; ++i) {
    const int64_t d = DivisorAtMost(rest, caps_inner_first[i]);
    t[levels - 1 - i] = d;
    rest /= d;
  }
  t[0] *= rest;
  return t;
}

// Per-thread and per-block tiles of the output axes for a GPU, planned jointly: from the last
// (contiguous) axis outward, the register tile takes up to kRegisterTile elements of the last axis
// and a second level of up to 2 on the one before; then threads take up to kThreads in total; the
// rest goes to blocks. Returns per axis [block, vthread, thread, inner, innermost].
std::vector<std::vector<int64_t>> PlanGpuOutputTiles(const std::vector<int64_t>& extents) {
  constexpr int64_t kRegisterTile = 8, kThreads = 128;
  const size_t n = extents.size();
  std::vector<std::vector<int64_t>> tiles(n, std::vector<int64_t>(5, 1));
  std::vector<int64_t> rest = extents;
  if (n >= 1) {
    tiles[n - 1][4] = DivisorAtMost(rest[n - 1], kRegisterTile);
    rest[n - 1] /= tiles[n - 1][4];
  }
  int64_t threads = 1;
  for (size_t i = n; i-- > 0;) {
    tiles[i][2] = DivisorAtMost(rest[i], kThreads / threads);
    rest[i] /= tiles[i][2];
    threads *= tiles[i][2];
  }
  // A second register level on the last axis that still has work left, for reuse of the other input.
  for (size_t i = n; i-- > 0;) {
    if (rest[i] > 1 && i + 1 < n) {
      tiles[i][3] = DivisorAtMost(rest[i], 2);
      rest[i] /= tiles[i][3];
      break;
    }
  }
  for (size_t i = 0; i < n; ++i) tiles[i][0] = rest[i];
  return tiles;
}

// Split-K part count: the fewest parts that give about kPartialOutputs partial sums (enough parallel
// work for a large GPU), keeping at least kMinPartLength of the reduction per part.
int64_t PickPartCount(const std::vector<int64_t>& candidates, int64_t outputs, int64_t reduce_extent) {
  constexpr int64_t kPartialOutputs = 256 * 1024, kMinPartLength = 16;
  int64_t pick = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (reduce_extent / candidates[i] < kMinPartLength) break;
    pick = static_cast<int64_t>(i);
    if (candidates[i] * outputs >= kPartialOutputs) break;
  }
  return std::max<int64_t>(pick, 0);
}

// cuda.rows_split: parts enough for two blocks a multiprocessor of a large GPU, 256 threads a part.
SketchDecisions DefaultRowSplitDecisions(const Schedule& fresh) {
  constexpr int64_t kBlocks = 264;
  SketchDecisions d = DefaultDecisions(TargetKind::kCuda);
  auto roles = FindRowRoles(fresh.state());
  const int64_t rows = roles ? ShapeOf(fresh.state().stages[fresh.state().FindStage(roles->reductions[0])]).outputs : 1;
  d.split_k = [rows](const std::vector<int64_t>& c) -> std::optional<int64_t> {
    size_t pick = 0;
    while (pick + 1 < c.size() && c[pick] * rows < kBlocks) ++pick;
    return static_cast<int64_t>(pick);
  };
  d.combine_threads = [](const std::vector<int64_t>& c) -> std::optional<int64_t> { return c.size() > 2 ? 2 : 0; };
  return d;
}

// The default register tile: two vectors wide, by a quarter of the vector registers (half of them
// accumulate): 8 rows of 32 on AVX-512, 4 of 16 on AVX2. The AVX-512 tile on AVX2 spills: gemm 512^3
// took 23 ms so, 10x the AVX-512 default's time.
struct RegisterTile {
  int64_t rows, width;
};
RegisterTile DefaultRegisterTile(const tir::CpuVectors& v) { return {v.registers / 4, 2 * int64_t{v.float_lanes}}; }

// cpu.registers: where the output's rows are over 2 KB apart (as those of the operand read along
// them), the operand is copied per parallel tile and the tile takes 8 register tiles down the rows,
// which share the copy. Default schedules on 2 cores: gemm 1024^3 9.2 ms so against 16.3 without the
// copy, M=512,N=768,K=768 2.4 against 3.9; gemm 512^3 (2 KB rows) 0.81 without it against 2.1.
// An operand read along its first dimension (a channels-last convolution's weights, along K) is
// copied too, laid out with that dimension last (conv2d_nhwc C=128 28x28: 34.5 ms strided).
SketchDecisions DefaultRegisterTileDecisions(int64_t row_bytes, bool strided_operand, const tir::CpuVectors& v) {
  constexpr int64_t kCopyAboveRowBytes = 2048, kTilesPerCopy = 8;
  SketchDecisions d = DefaultDecisions(TargetKind::kCpu);
  const RegisterTile tile = DefaultRegisterTile(v);
  const bool copy = row_bytes > kCopyAboveRowBytes || strided_operand;
  auto plain = d.tiles;
  d.tiles = [plain, tile, copy](const TileRequest& r) -> std::optional<std::vector<int64_t>> {
    if (r.reduce || r.levels != 3) return plain(r);
    if (r.axis == r.num_axes - 1) return Fill(r.extent, {tile.width, 1}, r.levels);
    if (r.axis != RegisterRowsAxis(r.num_axes)) return Fill(r.extent, {1, 1}, r.levels);
    return Fill(r.extent, {tile.rows, copy ? kTilesPerCopy : 1}, r.levels);
  };
  if (copy) d.copy_operand = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 1; };
  return d;
}

// cpu.registers on a convolution: vectors along the output channels, as oneDNN's kernels; a
// register tile of two vectors of channels (32 on AVX-512) by up to 8 output columns (a quarter of
// the vector registers), the weights packed
// once and the padded input copied (see copy_input); parallel tiles of 32 channels, the output rows split among
// them until there are at least 8. Batch-1 ResNet 3x3 layers so take 0.80-1.22 ms on 2 cores (C=64 56x56
// to C=512 7x7) against 8.8-17.8 with the rows default, and are faster than the tuned rows kernels.
// A 1x1 kernel reads each input value once per output channel and no neighbours: 64 channels by 4
// columns, at least 4 parallel tiles (C=256 56x56 to 64 channels: 0.56-0.59 ms against 0.71-0.81).
SketchDecisions DefaultChannelVectorDecisions(const StageShape& shape, const tir::CpuVectors& v) {
  const bool pointwise = shape.reduction == shape.first_reduce;
  const RegisterTile tile = DefaultRegisterTile(v);
  const int64_t channels = pointwise ? 2 * tile.width : tile.width;
  const int64_t columns_cap = pointwise ? tile.rows / 2 : tile.rows, min_tiles = pointwise ? 4 : 8;
  SketchDecisions d = DefaultDecisions(TargetKind::kCpu);
  d.channel_vectors = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 1; };
  d.copy_operand = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 2; };  // weights packed once
  // The padded input copied per parallel tile, or once before them where the tiles split no rows
  // (each would copy all of it).
  const int64_t channel_tiles = shape.spatial[0] * (shape.spatial[1] / DivisorAtMost(shape.spatial[1], channels));
  const int64_t row_parts = (min_tiles + channel_tiles - 1) / channel_tiles;
  d.copy_input = [row_parts](const std::vector<int64_t>&) -> std::optional<int64_t> { return row_parts > 1 ? 1 : 2; };
  auto plain = d.tiles;
  d.tiles = [plain, row_parts, channels, columns_cap](const TileRequest& r) -> std::optional<std::vector<int64_t>> {
    if (r.reduce || r.levels != 3) return plain(r);
    if (r.axis == 0) return std::vector<int64_t>{r.extent, 1, 1};  // images in parallel
    if (r.axis == 1) return Fill(r.extent, {channels, 1}, r.levels);
    if (r.axis == r.num_axes - 1) {
      const int64_t columns = DivisorAtMost(r.extent, columns_cap);
      return std::vector<int64_t>{1, r.extent / columns, columns};
    }
    const int64_t parts = r.axis == r.num_axes - 2 ? DivisorAtMost(r.extent, row_parts) : 1;
    return std::vector<int64_t>{parts, r.extent / parts, 1};
  };
  return d;
}

// cpu.registers: channel vectors on a convolution, else vectors along the output's rows.
SketchDecisions DefaultCpuRegisterDecisions(const Schedule& fresh) {
  auto roles = FindSketchRoles(fresh.state());
  if (!roles) return DefaultDecisions(TargetKind::kCpu);
  const Stage& main = fresh.state().stages[fresh.state().FindStage(roles->main)];
  const tir::CpuVectors& vectors = fresh.full_target().cpu;
  if (ChannelOperand(main)) return DefaultChannelVectorDecisions(ShapeOf(main), vectors);
  const StageShape shape = ShapeOf(main);
  const auto read = VectorOperand(main, main.op->axis.back().var.get());
  return DefaultRegisterTileDecisions(shape.spatial.empty() ? 0 : shape.spatial.back() * BytesOf(main.op->dtype),
                                      read && read->first_dim, vectors);
}

// cpu.matrix: as a gemm's cpu.registers, its rows the product's columns (the output's pixels).
SketchDecisions DefaultMatrixDecisions(const Schedule& fresh) {
  auto roles = FindSketchRoles(fresh.state());
  if (!roles) return DefaultDecisions(TargetKind::kCpu);
  const Stage& main = fresh.state().stages[fresh.state().FindStage(roles->main)];
  auto axes = FindMatrixAxes(*main.op);
  if (!axes) return DefaultDecisions(TargetKind::kCpu);
  return DefaultRegisterTileDecisions(MatrixAxes::Extent(*main.op, axes->n) * BytesOf(main.op->dtype), false,
                                      fresh.full_target().cpu);
}

// cuda.tensor_core: B's shared rows along N ([n][k]) where its operand is read along K (a
// channels-last convolution's input: copies of 16-byte runs of channels), else along K.
SketchDecisions DefaultTensorCoreDecisions(const Schedule& fresh) {
  SketchDecisions d = DefaultDecisions(TargetKind::kCuda);
  auto roles = FindSketchRoles(fresh.state());
  auto shape = roles ? TensorCoreShape(fresh, *roles) : Result<MmaShape>(roles.error());
  const int64_t rows = shape && shape->b_read_along_k ? 1 : 0;
  d.mma_b_rows = [rows](const std::vector<int64_t>&) -> std::optional<int64_t> { return rows; };
  return d;
}

}  // namespace

SketchDecisions DefaultDecisions(const Schedule& fresh, const SketchSpec& sketch) {
  if (sketch.name == "cuda.rows_split") return DefaultRowSplitDecisions(fresh);
  if (sketch.name == "cuda.tensor_core") return DefaultTensorCoreDecisions(fresh);
  if (sketch.name == "cpu.registers") return DefaultCpuRegisterDecisions(fresh);
  if (sketch.name == "cpu.matrix") return DefaultMatrixDecisions(fresh);
  if (sketch.name != "cuda.split_k") return DefaultDecisions(sketch.target);
  SketchDecisions d = DefaultDecisions(TargetKind::kCuda);
  auto roles = FindSketchRoles(fresh.state());
  if (!roles) return d;
  const Stage& main = fresh.state().stages[fresh.state().FindStage(roles->main)];
  const StageShape shape = ShapeOf(main);
  const int64_t outputs = shape.outputs, first_reduce = shape.first_reduce;
  const auto plan = std::make_shared<std::vector<std::vector<int64_t>>>(PlanGpuOutputTiles(shape.spatial));
  // The partial-sums stage's axes are [parts, the output axes...]: the parts all go to blocks.
  d.tiles = [plan](const TileRequest& r) -> std::optional<std::vector<int64_t>> {
    if (r.reduce) return Fill(r.extent, {1, r.axis == 0 ? 8 : 7}, r.levels);
    if (r.axis == 0 || r.axis - 1 >= static_cast<int>(plan->size())) return Fill(r.extent, {}, r.levels);
    return (*plan)[r.axis - 1];
  };
  d.split_k = [outputs, first_reduce](const std::vector<int64_t>& c) -> std::optional<int64_t> {
    return PickPartCount(c, outputs, first_reduce);
  };
  d.combine_threads = [](const std::vector<int64_t>& c) -> std::optional<int64_t> { return c.size() > 2 ? 2 : 0; };
  return d;
}

SketchDecisions DefaultDecisions(TargetKind target) { return DefaultDecisionsShrunk(target, 0); }

SketchDecisions DefaultDecisionsShrunk(TargetKind target, int shrink) {
  SketchDecisions d;
  if (target == TargetKind::kCuda) {
    // Caps of the last two spatial axes' levels, innermost first, from the default down.
    static const std::vector<int64_t> kSpatialCaps[] = {{4, 1, 16, 2}, {2, 1, 16, 2}, {2, 1, 8, 2},
                                                        {1, 1, 8, 2},  {1, 1, 8, 1},  {1, 1, 4, 1}};
    constexpr int kSpatialSteps = static_cast<int>(std::size(kSpatialCaps));
    static_assert(kSpatialSteps + 1 == kDefaultShrinkSteps);
    const int spatial = std::clamp(shrink, 0, kSpatialSteps - 1);
    // The last step also takes one element of every reduction axis at a time into the copies.
    const bool whole_reduce = shrink < kDefaultShrinkSteps - 1;
    // Levels: spatial [block, vthread, thread, inner, innermost]; reduce [outer, middle, inner].
    d.tiles = [spatial, whole_reduce](const TileRequest& r) -> std::optional<std::vector<int64_t>> {
      if (r.reduce) {
        if (!whole_reduce) return Fill(r.extent, {1, 1}, r.levels);
        return Fill(r.extent, {1, r.axis == 0 ? 8 : 7}, r.levels);
      }
      // Per thread 2 x 4 rows and columns (two virtual threads apart, so a warp's shared-memory reads
      // spread over the banks), 16 x 16 threads: 128 x 128 block tiles where the extents allow.
      if (r.axis >= r.num_axes - 2) return Fill(r.extent, kSpatialCaps[spatial], r.levels);
      return Fill(r.extent, {}, r.levels);
    };
    d.unroll = [](const std::vector<int64_t>& c) -> std::optional<int64_t> { return c.size() > 3 ? 3 : 0; };
    // Row operators: 256 threads a row (fewer for short rows), one row a block.
    d.row_threads = LargestUpTo(256);
    d.rows_per_block = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 0; };
    d.vector = [](const std::vector<int64_t>& c) -> std::optional<int64_t> { return c.size() - 1; };
    // Single-buffered copies: half the shared memory, so more blocks fit on a multiprocessor.
    d.double_buffer = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 0; };
    // Shared copies at the innermost outer reduction loop: the smallest copies.
    d.compute_location = [](size_t count) -> std::optional<int64_t> { return static_cast<int64_t>(count) - 1; };
    // Tensor cores: 2 x 2 warps of 4 x 4 mma tiles (128 x 64 outputs a block), 32-deep chunks,
    // copies 3 stages deep: those of the next two chunks overlap the mma of this one.
    d.mma_warps = LargestUpTo(2);
    d.mma_tiles = LargestUpTo(4);
    d.mma_k_steps = LargestUpTo(2);
    d.mma_stages = LargestUpTo(3);
    d.mma_block_group = LargestUpTo(1);
    d.mma_copy_vector = LargestUpTo(16);
  } else {
    // Levels: spatial [parallel, outer, register block, vector]; reduce [outer, inner]. cpu.registers
    // asks for spatial [parallel, outer, register]: a register tile of 8 rows of 32 (16 AVX-512
    // registers), where the extents allow.
    d.tiles = [](const TileRequest& r) -> std::optional<std::vector<int64_t>> {
      if (r.reduce) return Fill(r.extent, {r.axis == 0 ? 4 : 7}, r.levels);
      if (r.levels == 3) {
        const int64_t register_cap = r.axis == r.num_axes - 1 ? 32 : r.axis == RegisterRowsAxis(r.num_axes) ? 8 : 1;
        return Fill(r.extent, {register_cap, 1}, r.levels);
      }
      if (r.axis == r.num_axes - 1) return Fill(r.extent, {16, 1, 1}, r.levels);
      if (r.axis == r.num_axes - 2) return Fill(r.extent, {1, 4, 1}, r.levels);
      return Fill(r.extent, {}, r.levels);
    };
    d.unroll = [](const std::vector<int64_t>& c) -> std::optional<int64_t> { return c.size() > 2 ? 2 : 0; };
    d.vector = [](const std::vector<int64_t>& c) -> std::optional<int64_t> { return c.size() - 1; };  // rows' width
    d.copy_operand = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 0; };
    d.channel_vectors = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 0; };
    d.reduce_block = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 0; };
  }
  return d;
}

namespace {

// Whether the schedule lowers and passes the GPU validity check (sm_90's limits).
bool FitsTheGpu(const Schedule& sch) {
  auto f = Lower(sch.state());
  return f && CheckGpuValidity(*f).ok();
}

}  // namespace

Result<Schedule> DefaultSchedule(const Workload& workload, tir::Target target) {
  Schedule sch(workload, target);
  const SketchSpec* sketch = DefaultSketch(sch);
  if (!sketch) return MakeError("no sketch for this target");
  if (auto r = ApplySketch(sch, *sketch, DefaultDecisions(Schedule(workload, target), *sketch)); !r) return r.error();
  if (target != TargetKind::kCuda || FitsTheGpu(sch)) return sch;
  // Too large for the GPU (e.g. a 7x7 stride-2 convolution's input tile in shared memory): smaller
  // tiles, step by step; if none fits, the default as it is (its measurement says why).
  for (int shrink = 1; shrink < kDefaultShrinkSteps; ++shrink) {
    Schedule smaller(workload, target);
    if (ApplySketch(smaller, *sketch, DefaultDecisionsShrunk(target, shrink)) && FitsTheGpu(smaller)) return smaller;
  }
  return sch;
}

std::vector<Schedule> DefaultSchedules(const Workload& workload, tir::Target target,
                                       const std::vector<std::string>& sketches) {
  std::vector<Schedule> out;
  if (auto def = DefaultSchedule(workload, target)) out.push_back(std::move(*def));
  const Schedule fresh(workload, target);
  for (const SketchSpec* sketch : ApplicableSketches(fresh, sketches)) {
    if (sketch == DefaultSketch(fresh)) continue;
    if (auto sch = HandPickedSchedule(workload, *sketch, target.cpu)) out.push_back(std::move(*sch));
  }
  return out;
}

Result<Schedule> HandPickedSchedule(const Workload& workload, const SketchSpec& sketch, tir::CpuVectors cpu) {
  const tir::Target target{sketch.target, cpu};
  const Schedule fresh(workload, target);
  if (ApplicableSketches(fresh, {sketch.name}).empty()) {
    return MakeError(fmt::format("sketch {} does not apply to {} on the {} target", sketch.name,
                                 workload.CanonicalText(), TargetKindName(sketch.target)));
  }
  if (&sketch == DefaultSketch(fresh)) return DefaultSchedule(workload, target);
  Schedule sch(workload, target);
  if (auto r = ApplySketch(sch, sketch, DefaultDecisions(fresh, sketch)); !r) return r.error();
  return sch;
}

Result<Schedule> RandomSchedule(const Workload& workload, tir::Target target, uint64_t seed,
                                const std::vector<std::string>& sketches) {
  Schedule sch(workload, target, seed);
  const std::vector<const SketchSpec*> offered = ApplicableSketches(sch, sketches);
  if (offered.empty()) return MakeError("no sketch applies to " + workload.KeyText());
  const SketchSpec* sketch = offered[0];
  if (offered.size() > 1) {
    sketch = offered[static_cast<size_t>(sch.rng().UniformInt(0, static_cast<int64_t>(offered.size()) - 1))];
  }
  if (auto r = ApplySketch(sch, *sketch, SketchDecisions{}); !r) return r.error();
  return sch;
}

Result<Schedule> RandomScheduleOfSketch(const Workload& workload, const SketchSpec& sketch, uint64_t seed,
                                        tir::CpuVectors cpu) {
  Schedule sch(workload, tir::Target{sketch.target, cpu}, seed);
  if (auto r = ApplySketch(sch, sketch, SketchDecisions{}); !r) return r.error();
  return sch;
}

}  // namespace autotune::search
