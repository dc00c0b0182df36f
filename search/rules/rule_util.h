// Small helpers the schedule rules share.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "support/result.h"
#include "tir/analysis/expr_uses.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

// The root extents of a stage: its output axes, their product, the reduction's product and the
// outermost reduction axis (0 without a reduction).
struct StageShape {
  std::vector<int64_t> spatial;
  int64_t outputs = 1, reduction = 1, first_reduce = 0;
};
inline StageShape ShapeOf(const tir::Stage& st) {
  StageShape s;
  for (int id : st.root) {
    const tir::Iter& it = st.iters[id];
    if (it.is_reduce) {
      if (s.first_reduce == 0) s.first_reduce = it.extent;
      s.reduction *= it.extent;
    } else {
      s.spatial.push_back(it.extent);
      s.outputs *= it.extent;
    }
  }
  return s;
}

// A convolution's weights: the one buffer whose reads use the output-channel axis (axis 1), and only
// in their first index; none for a gemm (2-D output) or a grouped convolution (its input's channel
// depends on the group too). cpu.registers may put its vectors along that axis (copy_operand_cpu).
inline std::optional<std::string> ChannelOperand(const tir::Stage& st) {
  if (st.op->axis.size() < 3) return std::nullopt;
  const tir::VarNode* channel = st.op->axis[1].var.get();
  std::optional<std::string> found;
  for (const tir::BufferLoadNode* load : tir::LoadsIn(st.op->body)) {
    for (size_t d = 0; d < load->indices.size(); ++d) {
      const auto vars = tir::VarsIn(load->indices[d]);
      if (std::find(vars.begin(), vars.end(), channel) == vars.end()) continue;
      if (d != 0 || (found && *found != load->buffer->name)) return std::nullopt;
      found = load->buffer->name;
    }
  }
  return found;
}

// The operand that a vectorized loop over `axis` reads: the one buffer whose last index moves with it
// (read contiguously), else the one whose first index does (a channels-last convolution's KRSC
// weights read along K: `first_dim`, copied with that dimension last); none when several are read so.
struct VectorRead {
  std::string operand;
  bool first_dim = false;
};
// The buffers whose last (or first) index moves with `axis` in the stage's reads.
inline std::vector<std::string> ReadersOf(const tir::Stage& st, const tir::VarNode* axis, bool last_index) {
  std::vector<std::string> names;
  for (const tir::BufferLoadNode* load : tir::LoadsIn(st.op->body)) {
    if (load->indices.empty()) continue;
    const auto vars = tir::VarsIn(last_index ? load->indices.back() : load->indices.front());
    const bool reads = std::find(vars.begin(), vars.end(), axis) != vars.end();
    if (reads && std::find(names.begin(), names.end(), load->buffer->name) == names.end()) {
      names.push_back(load->buffer->name);
    }
  }
  return names;
}
inline std::optional<VectorRead> VectorOperand(const tir::Stage& st, const tir::VarNode* axis) {
  const std::vector<std::string> contiguous = ReadersOf(st, axis, true);
  if (!contiguous.empty()) return contiguous.size() == 1 ? std::optional(VectorRead{contiguous[0], false}) : std::nullopt;
  const std::vector<std::string> strided = ReadersOf(st, axis, false);
  return strided.size() == 1 ? std::optional(VectorRead{strided[0], true}) : std::nullopt;
}

// 0..n-1 with `d` moved last: an order of loops or of a buffer's dimensions (reorder_storage) that
// puts one of them innermost.
inline std::vector<int64_t> MovedLast(size_t n, size_t d) {
  std::vector<int64_t> order;
  for (size_t i = 0; i < n; ++i) {
    if (i != d) order.push_back(static_cast<int64_t>(i));
  }
  order.push_back(static_cast<int64_t>(d));
  return order;
}

// The loops fused into one, or the loop itself when there is one.
inline Result<tir::LoopRV> FuseIfMany(tir::Schedule& sch, const std::vector<tir::LoopRV>& loops) {
  if (loops.size() == 1) return loops[0];
  return sch.Fuse(loops);
}

// The current extent of a loop (its handle must be valid).
inline Result<int64_t> LoopExtent(const tir::Schedule& sch, tir::LoopRV loop) {
  AT_TRY(where, sch.Resolve(loop));
  return sch.state().stages[where.first].iters[where.second].extent;
}

// A row operator's output loops: its row loops fused, and its column loops fused (none for norm).
struct RowLoops {
  tir::LoopRV rows;
  std::optional<tir::LoopRV> cols;
};

// Inlines the stages `elementwise` (by name), then fuses the row and the column loops of `output`,
// whose first `row_dims` axes are the rows.
inline Result<RowLoops> InlineAndFuseRows(tir::Schedule& sch, const std::vector<std::string>& elementwise,
                                          const std::string& output, size_t row_dims) {
  for (const auto& name : elementwise) {
    AT_TRY(stage, sch.GetStage(name));
    AT_TRY_VOID(sch.ComputeInline(stage));
  }
  AT_TRY(out, sch.GetStage(output));
  AT_TRY(loops, sch.GetLoops(out));
  const auto cols_begin = loops.begin() + static_cast<std::ptrdiff_t>(row_dims);
  RowLoops r;
  AT_TRY(rows, FuseIfMany(sch, std::vector<tir::LoopRV>(loops.begin(), cols_begin)));
  r.rows = rows;
  if (cols_begin != loops.end()) {
    AT_TRY(cols, FuseIfMany(sch, std::vector<tir::LoopRV>(cols_begin, loops.end())));
    r.cols = cols;
  }
  return r;
}

// Computes each side output of a row operator at `row_loop` (the output's, after its reductions are
// placed there) and returns their column loops, fused, for the caller to split as the output's: the
// same threads then write and read each element of a row.
inline Result<std::vector<tir::LoopRV>> SideOutputsAtRow(tir::Schedule& sch, const std::vector<std::string>& side_outputs,
                                                         size_t row_dims, tir::LoopRV row_loop) {
  std::vector<tir::LoopRV> cols;
  for (auto name = side_outputs.rbegin(); name != side_outputs.rend(); ++name) {
    AT_TRY(stage, sch.GetStage(*name));
    AT_TRY_VOID(sch.ComputeAt(stage, row_loop));
    AT_TRY(loops, sch.GetLoops(stage));
    const auto cols_begin = loops.begin() + static_cast<std::ptrdiff_t>(row_dims);
    AT_TRY(fused, FuseIfMany(sch, std::vector<tir::LoopRV>(cols_begin, loops.end())));
    cols.push_back(fused);
  }
  return cols;
}

// The reduction loops of `stage` after its `spatial` ones, fused and split by `threads` bound to
// threadIdx.x (a reduction across threads), so that consecutive threads read consecutive elements.
inline Result<void> ReduceAcrossThreads(tir::Schedule& sch, tir::StageRV stage, size_t spatial, tir::IntRV threads) {
  AT_TRY(loops, sch.GetLoops(stage));
  AT_TRY(reduce, FuseIfMany(sch, std::vector<tir::LoopRV>(loops.begin() + static_cast<std::ptrdiff_t>(spatial), loops.end())));
  AT_TRY(parts, sch.Split(reduce, {std::monostate{}, threads}));
  return sch.Bind(parts[1], tir::ThreadTag::kThreadIdxX);
}

// Uniform over `candidates` unless `decide` picks one.
template <class Decider>
Result<tir::IntRV> SampleChoice(tir::Schedule& sch, const std::vector<int64_t>& candidates, const Decider& decide) {
  std::vector<double> probs(candidates.size(), 1.0 / static_cast<double>(candidates.size()));
  return sch.SampleCategorical(candidates, probs, decide(candidates));
}

}  // namespace autotune::search
