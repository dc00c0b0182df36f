#include "costmodel/program_features.h"

#include <algorithm>
#include <cmath>

#include "costmodel/access_features.h"
#include "costmodel/warp_request.h"
#include "support/check.h"
#include "tir/analysis/tensor_intrinsics.h"
#include "tir/functor.h"

namespace autotune::costmodel {

using namespace autotune::tir;

namespace {

// The first byte of each row an ldmatrix reads for a 16-bit fragment tile (relative to the tile's
// origin), in lane order: A's 16x16 tile as .x4 (rows 0-15 at column 0, then at column 8); B's 16x8
// as .x2, its 16 rows of k (.trans), or, read from [n][k] rows, its 8 rows of n at k 0, then at k 8;
// a wide B (16x16, .x4) as A's tile, or from [n][k] rows as two 16x8 tiles, the second 8 columns on.
std::vector<int64_t> LdmatrixRows(const TileOperand& t, bool matrix_a, bool wide) {
  auto at = [&](int64_t r, int64_t c) { return 2 * (t.transposed ? c * t.row_step + r : r * t.row_step + c); };
  std::vector<int64_t> rows;
  if (matrix_a || (wide && !t.transposed)) {
    for (int64_t half : {0, 8}) {
      for (int64_t i = 0; i < 16; ++i) rows.push_back(at(i, half));
    }
  } else if (t.transposed) {
    for (int64_t n0 : wide ? std::vector<int64_t>{0, 8} : std::vector<int64_t>{0}) {
      for (int64_t half : {0, 8}) {
        for (int64_t i = 0; i < 8; ++i) rows.push_back(at(half, n0 + i));
      }
    }
  } else {
    for (int64_t k = 0; k < 16; ++k) rows.push_back(at(k, 0));
  }
  return rows;
}

// Walks the program keeping the product of the enclosing loops' trip counts.
class Counter : public IRVisitor {
 public:
  ProgramCounts c;

  void Visit_(const ForNode* op) override {
    const int64_t* n = AsConstInt(op->extent);
    const double extent = n ? static_cast<double>(*n) : 1.0;
    Visit(op->extent);
    // Saved before this loop multiplies them in, so that sibling kernels and sibling thread loops do
    // not compound (version 1 saved them after, which multiplied the grids of consecutive kernels).
    const double saved = weight_, saved_blocks = block_product_, saved_threads = thread_product_;
    // The outermost block-bound loop of a nest is one kernel launch.
    const bool kernel_root = IsBlockTag(op->tag) && !in_kernel_;
    if (kernel_root) {
      in_kernel_ = true;
      kernel_threads_ = kernel_warp_lanes_ = 0;
      c.kernels += 1;
    }
    if (IsBlockTag(op->tag)) {
      block_product_ *= extent;
      c.grid = std::max(c.grid, block_product_);
    } else if (IsThreadTag(op->tag)) {
      thread_product_ *= extent;
      c.threads_per_block = std::max(c.threads_per_block, thread_product_);
    }
    if (in_kernel_) {
      // Warps are whole: a block of 49 threads occupies 64 lanes.
      kernel_threads_ = std::max(kernel_threads_, block_product_ * thread_product_);
      kernel_warp_lanes_ = std::max(kernel_warp_lanes_, block_product_ * 32 * std::ceil(thread_product_ / 32));
    }
    if (op->for_kind == ForKind::kUnrolled) c.unrolled_iterations += weight_ * extent;
    if (op->for_kind == ForKind::kVectorized) c.vectorized_lanes += weight_ * extent;
    weight_ *= extent;
    Visit(op->body);
    weight_ = saved;
    block_product_ = saved_blocks;
    thread_product_ = saved_threads;
    if (kernel_root) {
      in_kernel_ = false;
      c.total_threads += kernel_threads_;
      c.warp_lanes += kernel_warp_lanes_;
    }
  }

  void Visit_(const BinaryNode* op) override {
    const bool is_float = IsFloat(op->a->dtype);
    switch (op->op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub: (is_float ? c.float_add : c.int_arith) += weight_; break;
      case BinaryOp::kMul: (is_float ? c.float_mul : c.int_arith) += weight_; break;
      case BinaryOp::kDiv: (is_float ? c.float_div : c.int_arith) += weight_; break;
      case BinaryOp::kMin:
      case BinaryOp::kMax: (is_float ? c.float_min_max : c.int_arith) += weight_; break;
      case BinaryOp::kFloorDiv:
      case BinaryOp::kFloorMod: c.int_arith += weight_; break;
      default: (is_float ? c.float_compare : c.int_compare) += weight_; break;
    }
    VisitFields(op);
  }
  void Visit_(const SelectNode* op) override {
    c.selects += weight_;
    VisitFields(op);
  }
  void Visit_(const CallNode* op) override {
    c.calls += weight_;
    VisitFields(op);
  }
  void Visit_(const CastNode* op) override {
    c.casts += weight_;
    VisitFields(op);
  }
  void Visit_(const BufferLoadNode* op) override {
    Access(op->buffer, /*store=*/false);
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    Access(op->buffer, /*store=*/true);
    VisitFields(op);
  }
  void Visit_(const BarrierNode* op) override {
    c.barriers += weight_;
    VisitFields(op);
  }
  void Visit_(const TensorizeNode* op) override {
    const TensorIntrinsic* intrinsic = FindTensorIntrinsic(op->intrinsic);
    if (intrinsic) {
      switch (intrinsic->kind) {
        case TensorIntrinsicKind::kMma: c.mma += weight_; break;
        case TensorIntrinsicKind::kLoadA:
        case TensorIntrinsicKind::kLoadB:
          c.fragment_loads += weight_;
          if (intrinsic->operands == OperandType::kHalf) CountLdmatrix(*op, intrinsic->kind == TensorIntrinsicKind::kLoadA);
          break;
        case TensorIntrinsicKind::kStore: c.fragment_stores += weight_; break;
        case TensorIntrinsicKind::kFill: break;
      }
    }
    const double flops_before = c.Flops();
    VisitFields(op);  // the description: the scalar work the tile stands for
    if (intrinsic && intrinsic->kind == TensorIntrinsicKind::kMma) c.mma_flops += c.Flops() - flops_before;
  }
  void CountLdmatrix(const TensorizeNode& t, bool matrix_a) {
    auto call = MatchTensorIntrinsic(t);
    if (!call || !call->a) return;  // lowering reports a tile that does not match
    c.ldmatrix += weight_;
    const bool wide = !matrix_a && call->intrinsic->extents[1] == 16;
    c.ldmatrix_conflicts += weight_ * LdmatrixConflictDegree(LdmatrixRows(*call->a, matrix_a, wide));
  }
  void Visit_(const AllocateNode* op) override {
    if (op->buffer->async_fill) c.pipeline_stages = std::max(c.pipeline_stages, static_cast<double>(op->buffer->pipeline_stages));
    double elements = 1;
    for (const auto& d : op->buffer->shape) {
      const int64_t* n = AsConstInt(d);
      elements *= n ? static_cast<double>(*n) : 1.0;
    }
    const double bytes = elements * BytesOf(op->buffer->dtype);
    if (op->buffer->scope == Scope::kShared) c.shared_bytes += bytes;
    if (op->buffer->scope == Scope::kLocal) c.local_bytes += bytes;
    if (op->buffer->scope == Scope::kGlobal) c.workspace_bytes += bytes;
    VisitFields(op);
  }

 private:
  void Access(const Buffer& b, bool store) {
    switch (b->scope) {
      case Scope::kGlobal:
        (store ? c.global_stores : c.global_loads) += weight_;
        c.global_bytes += weight_ * BytesOf(b->dtype);
        break;
      case Scope::kShared: (store ? c.shared_stores : c.shared_loads) += weight_; break;
      case Scope::kLocal: (store ? c.local_stores : c.local_loads) += weight_; break;
    }
  }

  double weight_ = 1, block_product_ = 1, thread_product_ = 1;
  bool in_kernel_ = false;
  double kernel_threads_ = 0, kernel_warp_lanes_ = 0;
};

float Log2p(double x) { return static_cast<float>(std::log2(1.0 + std::max(0.0, x))); }

// The smallest element size of the floating-point parameters (0 when there are none).
double ElementBytes(const PrimFunc& f) {
  double bytes = 0;
  for (const auto& p : f.params) {
    if (IsFloat(p->dtype)) bytes = bytes == 0 ? BytesOf(p->dtype) : std::min<double>(bytes, BytesOf(p->dtype));
  }
  return bytes;
}

}  // namespace

ProgramCounts CountProgram(const PrimFunc& lowered) {
  Counter counter;
  if (lowered.body) counter.Visit(lowered.body);
  ProgramCounts c = counter.c;
  if (c.kernels == 0) {  // a host program (cpu): one call of one thread
    c.kernels = 1;
    c.total_threads = 1;
  }
  return c;
}

const std::vector<std::string>& FeatureNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {
        // version 1: program totals
        "float_add", "float_mul", "float_div", "float_min_max", "float_compare", "int_arith", "int_compare",
        "selects", "calls", "casts", "global_loads", "shared_loads", "local_loads", "global_stores",
        "shared_stores", "local_stores", "global_bytes", "barriers", "grid", "threads_per_block",
        "unrolled_iterations", "vectorized_lanes", "shared_bytes", "local_bytes", "arithmetic_intensity",
        // launch
        "kernels", "total_threads", "warp_lane_utilization", "workspace_bytes"};
    // per scope and direction, in the order ExtractFeatures appends them
    for (const char* scope : {"global", "shared", "local"}) {
      for (const char* dir : {"load", "store"}) {
        for (const char* what : {"bytes", "unique_bytes", "reuse", "stride"}) {
          n.push_back(std::string(scope) + "_" + dir + "_" + what);
        }
      }
    }
    for (const char* name : {"global_load_sectors_per_request", "global_store_sectors_per_request",
                             "global_load_sector_efficiency", "global_store_sector_efficiency", "global_sectors",
                             "shared_load_bank_conflict", "shared_store_bank_conflict",
                             // version 3: tensor cores
                             "mma", "fragment_loads", "fragment_stores", "mma_flop_fraction", "mma_per_fragment_load",
                             "pipeline_stages", "element_bytes",
                             // version 4
                             "ldmatrix_bank_conflict"}) {
      n.push_back(name);
    }
    return n;
  }();
  return names;
}

std::vector<float> ExtractFeatures(const PrimFunc& lowered) {
  const ProgramCounts c = CountProgram(lowered);
  const AccessFeatures a = AnalyzeAccesses(lowered);
  const double flops = c.Flops();
  auto plain = [](double x) { return static_cast<float>(std::max(0.0, x)); };
  std::vector<float> v = {
      Log2p(c.float_add),        Log2p(c.float_mul),          Log2p(c.float_div),
      Log2p(c.float_min_max),    Log2p(c.float_compare),      Log2p(c.int_arith),
      Log2p(c.int_compare),      Log2p(c.selects),            Log2p(c.calls),
      Log2p(c.casts),            Log2p(c.global_loads),       Log2p(c.shared_loads),
      Log2p(c.local_loads),      Log2p(c.global_stores),      Log2p(c.shared_stores),
      Log2p(c.local_stores),     Log2p(c.global_bytes),       Log2p(c.barriers),
      Log2p(c.grid),             Log2p(c.threads_per_block),  Log2p(c.unrolled_iterations),
      Log2p(c.vectorized_lanes), Log2p(c.shared_bytes),       Log2p(c.local_bytes),
      Log2p(flops / (c.global_bytes + 1.0)),
      Log2p(c.kernels),          Log2p(c.total_threads),      plain(c.warp_lanes > 0 ? c.total_threads / c.warp_lanes : 1.0),
      Log2p(c.workspace_bytes)};
  v.reserve(FeatureNames().size());
  for (const auto& scope : a.group) {
    for (const AccessGroup& g : scope) {
      v.push_back(Log2p(g.bytes));
      v.push_back(Log2p(g.unique_bytes));
      v.push_back(plain(g.Reuse()));
      v.push_back(plain(g.log_stride.Get()));
    }
  }
  for (double x : {a.sectors_per_request[0].Get(), a.sectors_per_request[1].Get(), a.sector_efficiency[0].Get(),
                   a.sector_efficiency[1].Get()}) {
    v.push_back(plain(x));
  }
  v.push_back(Log2p(a.global_sectors));
  v.push_back(plain(a.bank_conflict[0].Get()));
  v.push_back(plain(a.bank_conflict[1].Get()));
  v.push_back(Log2p(c.mma));
  v.push_back(Log2p(c.fragment_loads));
  v.push_back(Log2p(c.fragment_stores));
  v.push_back(plain(flops > 0 ? c.mma_flops / flops : 0.0));
  v.push_back(plain(c.fragment_loads > 0 ? c.mma / c.fragment_loads : 0.0));
  v.push_back(plain(c.pipeline_stages));
  v.push_back(plain(ElementBytes(lowered)));
  v.push_back(plain(c.ldmatrix > 0 ? c.ldmatrix_conflicts / c.ldmatrix : 0.0));
  AUTOTUNE_CHECK(v.size() == FeatureNames().size(), "feature values and names differ in length");
  return v;
}

tir::LowerOptions FeatureLowering() {
  tir::LowerOptions options;
  options.pipeline_fragments = false;
  return options;
}

}  // namespace autotune::costmodel
