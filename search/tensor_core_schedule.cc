#include "search/tensor_core_schedule.h"

#include <fmt/format.h>

#include <algorithm>

#include "search/rules/matrix_rewrite.h"
#include "search/rules/schedule_rule.h"
#include "tir/analysis/expr_uses.h"
#include "tir/analysis/matrix_axes.h"
#include "tir/analysis/tensor_intrinsics.h"
#include "tir/buffer.h"
#include "tir/te/operation.h"

namespace autotune::search {
namespace {

using tir::LoopRV;
using tir::Scope;
using tir::StageRV;
using tir::ThreadTag;

// What a stage's body reads (kernel inputs or stages, by name), in the order it first reads them.
std::vector<std::string> OperandsRead(const tir::ScheduleState& state, int stage) {
  std::vector<std::string> names;
  for (const tir::BufferNode* b : tir::te::ReadBuffers(state.stages[stage].op->body)) {
    for (const auto& in : state.inputs) {
      if (in->buffer.get() == b) names.push_back(in->name);
    }
    for (int id : state.order) {
      if (state.stages[id].op->buffer.get() == b) names.push_back(state.stages[id].name());
    }
  }
  return names;
}

// A shared copy of an operand for `reader`. An operand that is a stage (zero-padded by pad_einsum,
// a matrix form's gather) is inlined into the copy with every stage it reads: only inputs are read.
Result<StageRV> SharedCopy(tir::Schedule& sch, const std::string& operand, StageRV reader) {
  for (const auto& in : sch.state().inputs) {
    if (in->name == operand) return sch.CacheReadInput(operand, Scope::kShared, {reader});
  }
  AT_TRY(stage, sch.GetStage(operand));
  AT_TRY(copy, sch.CacheRead(stage, Scope::kShared, {reader}));
  AT_TRY(copy_id, sch.Resolve(copy));
  for (std::vector<int> read = sch.state().Producers(copy_id); !read.empty(); read = sch.state().Producers(copy_id)) {
    for (int id : read) {
      AT_TRY(producer, sch.GetStage(sch.state().stages[id].name()));
      AT_TRY_VOID(sch.ComputeInline(producer));
    }
  }
  return copy;
}


// Whether every variable of a load's last index is a reduction iterator of `op` (the load moves in
// memory only along K: a channels-last input's channels).
bool ReadAlongReduction(const tir::BufferLoadNode& load, const tir::te::OperationNode& op) {
  if (load.indices.empty()) return false;
  const auto vars = tir::VarsIn(load.indices.back());
  return !vars.empty() && std::all_of(vars.begin(), vars.end(), [&](const tir::VarNode* v) {
    return std::any_of(op.reduce_axis.begin(), op.reduce_axis.end(), [&](const auto& r) { return r.var.get() == v; });
  });
}

// The multiple M or N is padded to: none when it is a multiple of 64 (the factors have a choice),
// else whole mma tiles when it is small, else 64. (N = 1000 is whole 8-wide tiles, but only 125 of
// them: no block tile wider than 8 would divide it.)
int64_t OutputPadUnit(int64_t extent, int64_t tile) {
  if (extent % 64 == 0) return 1;
  return extent < 64 ? tile : 64;
}
// The multiple K is padded to: none when whole steps cover it, else 32.
int64_t ReducePadUnit(int64_t extent, int64_t step) { return extent % step == 0 ? 1 : 32; }

// Shared rows padded against bank conflicts, as (alignment factor, offset) of the row stride in
// elements: 16-bit rows 16k + 8 (the 8 rows an ldmatrix reads in different banks); float32 A rows
// 8k + 4 (likewise for its ldmatrix), float32 B rows 32k + 8 (a lane's k row and n column: the 32
// lanes' words in 32 banks).
// B's [n][k] rows are read as A's are (8 rows of a step's k), and padded the same.
std::pair<int64_t, int64_t> RowAlignment(const MmaShape& s, bool k_along_rows) {
  if (s.element_bytes == 2) return {16, 8};
  return k_along_rows ? std::pair<int64_t, int64_t>{8, 4} : std::pair<int64_t, int64_t>{32, 8};
}
int64_t PaddedRow(int64_t extent, std::pair<int64_t, int64_t> align) {
  return tir::AlignedStride(extent, align.first, align.second);
}

// A factor's value: as given, or the decision a random variable holds (no factor: an error).
Result<int64_t> ResolveFactor(const tir::Schedule& sch, const tir::FactorArg& f) {
  if (const auto* v = std::get_if<int64_t>(&f)) return *v;
  if (const auto* rv = std::get_if<tir::IntRV>(&f)) return sch.Resolve(*rv);
  return MakeError("tensor cores: a tiling factor is missing");
}

// The output stage: blocks of warps, each warp storing its accumulator tiles (store_16x8).
// Returns the warp's loop (threadIdx.z), where the accumulator is computed.
Result<LoopRV> TileOutput(tir::Schedule& sch, StageRV out, const TensorCoreFactors& t) {
  AT_TRY(loops, sch.GetLoops(out));
  const size_t n = loops.size();
  AT_TRY(rows, sch.Split(loops[n - 2], {std::monostate{}, t.warps_m, t.tiles_m, int64_t{16}}));
  AT_TRY(cols, sch.Split(loops[n - 1], {std::monostate{}, t.warps_n, t.tiles_n, int64_t{8}}));
  // The block index walks `block_group` block rows down a column before the next column.
  AT_TRY(row_groups, sch.Split(rows[0], {std::monostate{}, t.block_group}));
  std::vector<LoopRV> blocks(loops.begin(), loops.end() - 2);
  for (LoopRV l : {row_groups[0], cols[0], row_groups[1]}) blocks.push_back(l);
  std::vector<LoopRV> order = blocks;
  for (int level = 1; level < 4; ++level) {
    order.push_back(rows[level]);
    order.push_back(cols[level]);
  }
  AT_TRY_VOID(sch.Reorder(order));
  AT_TRY(block, sch.Fuse(blocks));
  AT_TRY_VOID(sch.Bind(block, ThreadTag::kBlockIdxX));
  AT_TRY_VOID(sch.Bind(rows[1], ThreadTag::kThreadIdxY));
  AT_TRY_VOID(sch.Bind(cols[1], ThreadTag::kThreadIdxZ));
  AT_TRY_VOID(sch.Tensorize(rows[3], "store_16x8"));
  return cols[1];
}

// B's shared copy with its last two dimensions (k, n) stored as [n][k].
Result<void> LayOutByColumns(tir::Schedule& sch, StageRV copy) {
  AT_TRY(id, sch.Resolve(copy));
  const size_t rank = sch.state().stages[id].op->shape.size();
  std::vector<int64_t> order;
  for (size_t d = 0; d + 2 < rank; ++d) order.push_back(static_cast<int64_t>(d));
  order.push_back(static_cast<int64_t>(rank) - 1);
  order.push_back(static_cast<int64_t>(rank) - 2);
  return sch.ReorderStorage(copy, order);
}

const char* MmaIntrinsic(const MmaShape& s) {
  if (s.element_bytes == 2) return "mma_m16n8k16";
  return s.precision == tir::Precision::kSplitTF32 ? "mma_m16n8k8_3xtf32" : "mma_m16n8k8_tf32";
}

// The accumulator's loops: k-chunks (shared memory), steps (fragments), then the warp's tiles, each
// one mma. Returns the chunk and step loops.
Result<std::pair<LoopRV, LoopRV>> TileAccumulator(tir::Schedule& sch, StageRV acc, const MmaShape& shape,
                                                  const TensorCoreFactors& t) {
  AT_TRY(loops, sch.GetLoops(acc));
  const size_t n = loops.size();
  AT_TRY(rows, sch.Split(loops[n - 3], {std::monostate{}, int64_t{16}}));
  AT_TRY(cols, sch.Split(loops[n - 2], {std::monostate{}, int64_t{8}}));
  AT_TRY(ks, sch.Split(loops[n - 1], {std::monostate{}, t.k_steps, shape.step()}));
  std::vector<LoopRV> order(loops.begin(), loops.end() - 3);
  for (LoopRV l : {ks[0], ks[1], rows[0], cols[0], rows[1], cols[1], ks[2]}) order.push_back(l);
  AT_TRY_VOID(sch.Reorder(order));
  AT_TRY_VOID(sch.Tensorize(rows[1], MmaIntrinsic(shape)));
  // Unrolled, the fragment loads of the next step can be issued while this step's mma run.
  AT_TRY_VOID(sch.Unroll(ks[1]));
  return std::make_pair(ks[0], ks[1]);
}

// A fragment copy: its tile loops split off and tensorized (A: 16-row tiles a step deep; B: 8-column
// tiles a step deep, 16-bit ones two side by side (one ldmatrix.x4) where `b_pairs`).
Result<void> TileFragment(tir::Schedule& sch, StageRV frag, const MmaShape& shape, bool matrix_a, bool b_pairs = false) {
  AT_TRY(loops, sch.GetLoops(frag));
  const size_t n = loops.size();
  const bool half = shape.element_bytes == 2;
  if (matrix_a) {
    AT_TRY(rows, sch.Split(loops[n - 2], {std::monostate{}, int64_t{16}}));
    return sch.Tensorize(rows[1], half ? "load_a_16x16" : "load_a_16x8");
  }
  const bool wide = half && b_pairs;
  AT_TRY(cols, sch.Split(loops[n - 1], {std::monostate{}, int64_t{wide ? 16 : 8}}));
  std::vector<LoopRV> order(loops.begin(), loops.end() - 2);
  for (LoopRV l : {cols[0], loops[n - 2], cols[1]}) order.push_back(l);
  AT_TRY_VOID(sch.Reorder(order));
  return sch.Tensorize(loops[n - 2], wide ? "load_b_16x16" : half ? "load_b_16x8" : "load_b_8x8");
}

// Every thread of the block copies part of a shared-memory chunk, its rows padded (RowAlignment)
// against bank conflicts of the fragment loads. B laid out [n][k] is copied along its k.
Result<void> CooperativeFetch(tir::Schedule& sch, StageRV copy, const MmaShape& shape, bool matrix_a,
                              const TensorCoreFactors& t) {
  AT_TRY(loops, sch.GetLoops(copy));
  const bool n_rows = !matrix_a && t.b_n_rows;
  const int row_dim = static_cast<int>(loops.size()) - (n_rows ? 1 : 2);
  if (n_rows) {
    std::swap(loops[loops.size() - 1], loops[loops.size() - 2]);
    AT_TRY_VOID(sch.Reorder(loops));
  }
  AT_TRY(all, sch.Fuse(loops));
  // 16 bytes a thread and step (rows are whole multiples of that long), unless decided otherwise for B.
  const tir::FactorArg vector = !matrix_a && t.b_copy_vector ? *t.b_copy_vector : tir::FactorArg{16 / shape.element_bytes};
  AT_TRY(parts, sch.Split(all, {std::monostate{}, t.warps_m, t.warps_n, int64_t{32}, vector}));
  AT_TRY_VOID(sch.Reorder({parts[1], parts[2], parts[3], parts[0], parts[4]}));
  AT_TRY_VOID(sch.Unroll(parts[0]));  // the copies' addresses become constants apart
  AT_TRY_VOID(sch.Bind(parts[1], ThreadTag::kThreadIdxY));
  AT_TRY_VOID(sch.Bind(parts[2], ThreadTag::kThreadIdxZ));
  AT_TRY_VOID(sch.Bind(parts[3], ThreadTag::kThreadIdxX));
  AT_TRY_VOID(sch.Vectorize(parts[4]));
  const auto [factor, offset] = RowAlignment(shape, matrix_a || n_rows);
  return sch.StorageAlign(copy, row_dim, factor, offset);
}

}  // namespace

Result<MmaShape> TensorCoreShape(const tir::Schedule& fresh, const SketchRoles& roles) {
  const tir::ScheduleState& state = fresh.state();
  const int main = state.FindStage(roles.main);
  if (fresh.target() != tir::TargetKind::kCuda || main < 0) return MakeError("tensor cores: a cuda matrix product");
  const auto& op = *state.stages[main].op;
  auto axes = tir::FindMatrixAxes(op);
  if (!axes) return MakeError("tensor cores: " + axes.error().message);
  const bool half_output = tir::IsHalf(state.stages[state.OutputStage()].op->dtype) && !roles.epilogue.empty();
  MmaShape shape{axes->Extent(op, axes->m), axes->Extent(op, axes->n), axes->Extent(op, axes->k, true)};
  // A product of two kernel inputs laid out as matrices is tiled as it is; anything else is first
  // rewritten into that form.
  shape.matrix_form = !roles.pad.empty() || OperandsRead(state, main).size() != 2 || !axes->IsPlain(op);
  shape.b_read_along_k = ReadAlongReduction(*axes->b, op);
  const bool half_operands = tir::IsHalf(axes->a->buffer->dtype) && axes->b->buffer->dtype == axes->a->buffer->dtype;
  if (axes->precision == tir::Precision::kIEEE && half_operands && half_output) return shape;
  if (axes->precision != tir::Precision::kIEEE) {
    shape.element_bytes = 4;
    shape.precision = axes->precision;
    return shape;
  }
  return MakeError("tensor cores: float16 or bfloat16 products, or float32 at tf32 or 3xtf32 precision");
}

MmaShape PaddedShape(const MmaShape& s) {
  auto up = [](int64_t x, int64_t m) { return (x + m - 1) / m * m; };
  MmaShape p = s;
  p.m = up(s.m, OutputPadUnit(s.m, 16));
  p.n = up(s.n, OutputPadUnit(s.n, 8));
  p.k = up(s.k, ReducePadUnit(s.k, s.step()));
  return p;
}

int64_t ChunkSharedBytes(const MmaShape& s, int64_t bm, int64_t bn, int64_t bk) {
  const int64_t b = std::max(bk * PaddedRow(bn, RowAlignment(s, false)), bn * PaddedRow(bk, RowAlignment(s, true)));
  return s.element_bytes * (bm * PaddedRow(bk, RowAlignment(s, true)) + b);
}


Result<void> ApplyTensorCoreTiling(tir::Schedule& sch, const SketchRoles& fresh_roles, const MmaShape& shape,
                                   const TensorCoreFactors& f) {
  SketchRoles roles = fresh_roles;
  std::optional<tir::MatrixAxes> matrix_axes;
  if (shape.matrix_form) {
    AT_TRY(axes, RewriteAsMatrices(sch, roles));
    matrix_axes = axes;
  }
  // Elementwise stages between the product and the output fold into the output's store; those
  // feeding the product's operands (padding) into the operands.
  AT_TRY(main, sch.GetStage(roles.main));
  AT_TRY(main_id, sch.Resolve(main));
  std::vector<std::string> keep = {roles.main};
  for (int id : sch.state().Producers(main_id)) keep.push_back(sch.state().stages[id].name());
  // After split_k: the partial sums the tiles store, and the stage that sums them.
  for (const std::string* name : {&roles.epilogue, &roles.combine}) {
    if (!name->empty()) keep.push_back(*name);
  }
  AT_TRY_VOID(InlineAllBut(sch, keep));
  // The accumulator: the product itself, or (no stage after it) a local cache of it that the
  // product's stage then stores.
  StageRV acc = main;
  if (roles.epilogue.empty()) {
    AT_TRY(cache, sch.CacheWrite(main, Scope::kLocal));
    acc = cache;
  }
  AT_TRY(acc_id, sch.Resolve(acc));
  const MmaShape padded = PaddedShape(shape);
  if (padded.m != shape.m || padded.n != shape.n || padded.k != shape.k) {
    std::vector<int64_t> multiples(sch.state().stages[acc_id].root.size() - 3, 1);
    for (int64_t m : {OutputPadUnit(shape.m, 16), OutputPadUnit(shape.n, 8), ReducePadUnit(shape.k, shape.step())}) {
      multiples.push_back(m);
    }
    AT_TRY_VOID(sch.PadEinsum(acc, multiples));
  }
  const std::vector<std::string> operands = OperandsRead(sch.state(), acc_id);
  StageRV out = main;
  if (!roles.epilogue.empty()) {
    AT_TRY(epilogue, sch.GetStage(roles.epilogue));
    out = epilogue;
    AT_TRY_VOID(sch.SetScope(acc, Scope::kLocal));
  }
  AT_TRY(a_shared, SharedCopy(sch, operands[0], acc));
  AT_TRY(b_shared, SharedCopy(sch, operands[1], acc));
  if (f.b_n_rows) AT_TRY_VOID(LayOutByColumns(sch, b_shared));
  AT_TRY(a_frag, sch.CacheRead(a_shared, Scope::kLocal, {acc}));
  AT_TRY(b_frag, sch.CacheRead(b_shared, Scope::kLocal, {acc}));
  if (matrix_axes) AT_TRY_VOID(FuseOutputAsMatrix(sch, out, *matrix_axes));
  AT_TRY(warp, TileOutput(sch, out, f));
  AT_TRY_VOID(sch.ComputeAt(acc, warp));
  AT_TRY(k_loops, TileAccumulator(sch, acc, shape, f));
  AT_TRY_VOID(sch.ComputeAt(a_frag, k_loops.second));
  AT_TRY_VOID(sch.ComputeAt(b_frag, k_loops.second));
  AT_TRY_VOID(sch.ComputeAt(a_shared, k_loops.first));
  AT_TRY_VOID(sch.ComputeAt(b_shared, k_loops.first));
  AT_TRY_VOID(TileFragment(sch, a_frag, shape, true));
  AT_TRY(tiles_n, ResolveFactor(sch, f.tiles_n));
  AT_TRY_VOID(TileFragment(sch, b_frag, shape, false, tiles_n % 2 == 0));
  AT_TRY_VOID(CooperativeFetch(sch, a_shared, shape, true, f));
  AT_TRY_VOID(CooperativeFetch(sch, b_shared, shape, false, f));
  AT_TRY_VOID(sch.Pipeline(a_shared, f.stages));
  return sch.Pipeline(b_shared, f.stages);
}

Result<tir::Schedule> TensorCoreSchedule(const tir::Workload& workload, const TensorCoreTiling& t) {
  tir::Schedule sch(workload, tir::TargetKind::kCuda);
  AT_TRY(roles, FindSketchRoles(sch.state()));
  AT_TRY(shape, TensorCoreShape(sch, roles));
  const MmaShape padded = PaddedShape(shape);
  const int64_t bm = t.warps_m * t.tiles_m * 16, bn = t.warps_n * t.tiles_n * 8, bk = t.k_steps * shape.step();
  if (padded.m % bm != 0 || padded.n % bn != 0 || padded.k % bk != 0) {
    return MakeError(fmt::format("tensor cores: M={} N={} K={} (padded) are not multiples of the {}x{}x{} block tile",
                                 padded.m, padded.n, padded.k, bm, bn, bk));
  }
  AT_TRY_VOID(ApplyTensorCoreTiling(sch, roles, shape,
                                    {t.warps_m, t.warps_n, t.tiles_m, t.tiles_n, t.k_steps, t.stages, std::nullopt,
                                     shape.matrix_form && t.b_n_rows, t.block_group}));
  return sch;
}

}  // namespace autotune::search
