#include "search/tensor_core_schedule.h"

#include <fmt/format.h>

#include <algorithm>

#include "search/rules/schedule_rule.h"
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

// A shared copy of an operand for `reader`; a zero-padded operand (pad_einsum) is inlined into it.
Result<StageRV> SharedCopy(tir::Schedule& sch, const std::string& operand, StageRV reader) {
  for (const auto& in : sch.state().inputs) {
    if (in->name == operand) return sch.CacheReadInput(operand, Scope::kShared, {reader});
  }
  AT_TRY(padded, sch.GetStage(operand));
  AT_TRY(copy, sch.CacheRead(padded, Scope::kShared, {reader}));
  AT_TRY_VOID(sch.ComputeInline(padded));
  return copy;
}

// The multiple M or N is padded to: none when it is a multiple of 64 (the factors have a choice),
// else whole mma tiles when it is small, else 64. (N = 1000 is whole 8-wide tiles, but only 125 of
// them: no block tile wider than 8 would divide it.)
int64_t OutputPadUnit(int64_t extent, int64_t tile) {
  if (extent % 64 == 0) return 1;
  return extent < 64 ? tile : 64;
}
// The multiple K is padded to: none when whole 16-deep steps cover it, else 32.
int64_t ReducePadUnit(int64_t extent) { return extent % 16 == 0 ? 1 : 32; }

// The output stage: blocks of warps, each warp storing its accumulator tiles (store_16x8).
// Returns the warp's loop (threadIdx.z), where the accumulator is computed.
Result<LoopRV> TileOutput(tir::Schedule& sch, StageRV out, const TensorCoreFactors& t) {
  AT_TRY(loops, sch.GetLoops(out));
  const size_t n = loops.size();
  AT_TRY(rows, sch.Split(loops[n - 2], {std::monostate{}, t.warps_m, t.tiles_m, int64_t{16}}));
  AT_TRY(cols, sch.Split(loops[n - 1], {std::monostate{}, t.warps_n, t.tiles_n, int64_t{8}}));
  std::vector<LoopRV> order(loops.begin(), loops.end() - 2);
  for (int level = 0; level < 4; ++level) {
    order.push_back(rows[level]);
    order.push_back(cols[level]);
  }
  AT_TRY_VOID(sch.Reorder(order));
  std::vector<LoopRV> blocks(loops.begin(), loops.end() - 2);
  blocks.push_back(rows[0]);
  blocks.push_back(cols[0]);
  AT_TRY(block, sch.Fuse(blocks));
  AT_TRY_VOID(sch.Bind(block, ThreadTag::kBlockIdxX));
  AT_TRY_VOID(sch.Bind(rows[1], ThreadTag::kThreadIdxY));
  AT_TRY_VOID(sch.Bind(cols[1], ThreadTag::kThreadIdxZ));
  AT_TRY_VOID(sch.Tensorize(rows[3], "store_16x8"));
  return cols[1];
}

// The accumulator's loops: k-chunks (shared memory), 16-deep steps (fragments), then the warp's
// tiles, each one mma. Returns the chunk and step loops.
Result<std::pair<LoopRV, LoopRV>> TileAccumulator(tir::Schedule& sch, StageRV acc, const TensorCoreFactors& t) {
  AT_TRY(loops, sch.GetLoops(acc));
  const size_t n = loops.size();
  AT_TRY(rows, sch.Split(loops[n - 3], {std::monostate{}, int64_t{16}}));
  AT_TRY(cols, sch.Split(loops[n - 2], {std::monostate{}, int64_t{8}}));
  AT_TRY(ks, sch.Split(loops[n - 1], {std::monostate{}, t.k_steps, int64_t{16}}));
  std::vector<LoopRV> order(loops.begin(), loops.end() - 3);
  for (LoopRV l : {ks[0], ks[1], rows[0], cols[0], rows[1], cols[1], ks[2]}) order.push_back(l);
  AT_TRY_VOID(sch.Reorder(order));
  AT_TRY_VOID(sch.Tensorize(rows[1], "mma_m16n8k16"));
  // Unrolled, the fragment loads of the next step can be issued while this step's mma run.
  AT_TRY_VOID(sch.Unroll(ks[1]));
  return std::make_pair(ks[0], ks[1]);
}

// A fragment copy: its tile loops split off and tensorized (A: 16x16 row tiles; B: 16x8 column tiles).
Result<void> TileFragment(tir::Schedule& sch, StageRV frag, bool matrix_a) {
  AT_TRY(loops, sch.GetLoops(frag));
  const size_t n = loops.size();
  if (matrix_a) {
    AT_TRY(rows, sch.Split(loops[n - 2], {std::monostate{}, int64_t{16}}));
    return sch.Tensorize(rows[1], "load_a_16x16");
  }
  AT_TRY(cols, sch.Split(loops[n - 1], {std::monostate{}, int64_t{8}}));
  std::vector<LoopRV> order(loops.begin(), loops.end() - 2);
  for (LoopRV l : {cols[0], loops[n - 2], cols[1]}) order.push_back(l);
  AT_TRY_VOID(sch.Reorder(order));
  return sch.Tensorize(loops[n - 2], "load_b_16x8");
}

// Every thread of the block copies part of a shared-memory chunk: its rows padded by 8 elements
// (16 bytes) so that the 8 rows one ldmatrix reads fall in different banks.
Result<void> CooperativeFetch(tir::Schedule& sch, StageRV copy, const TensorCoreFactors& t) {
  AT_TRY(loops, sch.GetLoops(copy));
  const int row_dim = static_cast<int>(loops.size()) - 2;
  AT_TRY(all, sch.Fuse(loops));
  // 8 elements (16 bytes) a thread and step: rows are multiples of 8 elements long.
  AT_TRY(parts, sch.Split(all, {std::monostate{}, t.warps_m, t.warps_n, int64_t{32}, int64_t{8}}));
  AT_TRY_VOID(sch.Reorder({parts[1], parts[2], parts[3], parts[0], parts[4]}));
  AT_TRY_VOID(sch.Unroll(parts[0]));  // the copies' addresses become constants apart
  AT_TRY_VOID(sch.Bind(parts[1], ThreadTag::kThreadIdxY));
  AT_TRY_VOID(sch.Bind(parts[2], ThreadTag::kThreadIdxZ));
  AT_TRY_VOID(sch.Bind(parts[3], ThreadTag::kThreadIdxX));
  AT_TRY_VOID(sch.Vectorize(parts[4]));
  return sch.StorageAlign(copy, row_dim, 16, 8);  // row strides of 16k + 8 elements
}

}  // namespace

Result<MmaShape> TensorCoreShape(const tir::Schedule& fresh, const SketchRoles& roles) {
  const tir::ScheduleState& state = fresh.state();
  const int main = state.FindStage(roles.main);
  if (fresh.target() != tir::TargetKind::kCuda || main < 0) return MakeError("tensor cores: a cuda matrix product");
  if (!tir::IsHalf(state.stages[state.OutputStage()].op->dtype) || roles.epilogue.empty()) {
    return MakeError("tensor cores: the output must be float16 or bfloat16");
  }
  if (!roles.pad.empty() || OperandsRead(state, main).size() != 2) {
    return MakeError("tensor cores: the product must read two kernel inputs directly");
  }
  const tir::Stage& st = state.stages[main];
  const auto& op = *st.op;
  if (op.axis.size() < 2 || op.reduce_axis.size() != 1) return MakeError("tensor cores: not a matrix product");
  return MmaShape{op.shape[op.axis.size() - 2], op.shape[op.axis.size() - 1], st.iters[st.root.back()].extent};
}

MmaShape PaddedShape(const MmaShape& s) {
  auto up = [](int64_t x, int64_t m) { return (x + m - 1) / m * m; };
  return {up(s.m, OutputPadUnit(s.m, 16)), up(s.n, OutputPadUnit(s.n, 8)), up(s.k, ReducePadUnit(s.k))};
}

Result<void> ApplyTensorCoreTiling(tir::Schedule& sch, const SketchRoles& roles, const MmaShape& shape,
                                   const TensorCoreFactors& f) {
  // Elementwise stages between the product and the output fold into the output's store.
  for (int id : std::vector<int>(sch.state().order)) {
    const auto& st = sch.state().stages[id];
    if (st.name() == roles.main || st.is_output) continue;
    AT_TRY(s, sch.GetStage(st.name()));
    AT_TRY_VOID(sch.ComputeInline(s));
  }
  AT_TRY(acc, sch.GetStage(roles.main));
  const MmaShape padded = PaddedShape(shape);
  if (padded.m != shape.m || padded.n != shape.n || padded.k != shape.k) {
    std::vector<int64_t> multiples(sch.state().stages[sch.state().FindStage(roles.main)].root.size() - 3, 1);
    for (int64_t m : {OutputPadUnit(shape.m, 16), OutputPadUnit(shape.n, 8), ReducePadUnit(shape.k)}) multiples.push_back(m);
    AT_TRY_VOID(sch.PadEinsum(acc, multiples));
  }
  const std::vector<std::string> operands = OperandsRead(sch.state(), sch.state().FindStage(roles.main));
  AT_TRY(out, sch.GetStage(roles.epilogue));
  AT_TRY_VOID(sch.SetScope(acc, Scope::kLocal));
  AT_TRY(a_shared, SharedCopy(sch, operands[0], acc));
  AT_TRY(b_shared, SharedCopy(sch, operands[1], acc));
  AT_TRY(a_frag, sch.CacheRead(a_shared, Scope::kLocal, {acc}));
  AT_TRY(b_frag, sch.CacheRead(b_shared, Scope::kLocal, {acc}));
  AT_TRY(warp, TileOutput(sch, out, f));
  AT_TRY_VOID(sch.ComputeAt(acc, warp));
  AT_TRY(k_loops, TileAccumulator(sch, acc, f));
  AT_TRY_VOID(sch.ComputeAt(a_frag, k_loops.second));
  AT_TRY_VOID(sch.ComputeAt(b_frag, k_loops.second));
  AT_TRY_VOID(sch.ComputeAt(a_shared, k_loops.first));
  AT_TRY_VOID(sch.ComputeAt(b_shared, k_loops.first));
  AT_TRY_VOID(TileFragment(sch, a_frag, true));
  AT_TRY_VOID(TileFragment(sch, b_frag, false));
  AT_TRY_VOID(CooperativeFetch(sch, a_shared, f));
  AT_TRY_VOID(CooperativeFetch(sch, b_shared, f));
  AT_TRY_VOID(sch.Pipeline(a_shared, f.stages));
  return sch.Pipeline(b_shared, f.stages);
}

Result<tir::Schedule> TensorCoreSchedule(const tir::Workload& workload, const TensorCoreTiling& t) {
  tir::Schedule sch(workload, tir::TargetKind::kCuda);
  AT_TRY(roles, FindSketchRoles(sch.state()));
  AT_TRY(shape, TensorCoreShape(sch, roles));
  const MmaShape padded = PaddedShape(shape);
  const int64_t bm = t.warps_m * t.tiles_m * 16, bn = t.warps_n * t.tiles_n * 8, bk = t.k_steps * 16;
  if (padded.m % bm != 0 || padded.n % bn != 0 || padded.k % bk != 0) {
    return MakeError(fmt::format("tensor cores: M={} N={} K={} (padded) are not multiples of the {}x{}x{} block tile",
                                 padded.m, padded.n, padded.k, bm, bn, bk));
  }
  AT_TRY_VOID(ApplyTensorCoreTiling(sch, roles, shape, {t.warps_m, t.warps_n, t.tiles_m, t.tiles_n, t.k_steps, t.stages}));
  return sch;
}

}  // namespace autotune::search
