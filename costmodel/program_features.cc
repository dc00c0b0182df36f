#include "costmodel/program_features.h"

#include <algorithm>
#include <cmath>

#include "tir/functor.h"

namespace autotune::costmodel {

using namespace autotune::tir;

namespace {

// Walks the program keeping the product of the enclosing loops' trip counts.
class Counter : public IRVisitor {
 public:
  ProgramCounts c;

  void Visit_(const ForNode* op) override {
    const int64_t* n = AsConstInt(op->extent);
    const double extent = n ? static_cast<double>(*n) : 1.0;
    Visit(op->extent);
    if (op->tag >= ThreadTag::kBlockIdxX && op->tag <= ThreadTag::kBlockIdxZ) {
      block_product_ *= extent;
      c.grid = std::max(c.grid, block_product_);
    } else if (op->tag >= ThreadTag::kThreadIdxX && op->tag <= ThreadTag::kThreadIdxZ) {
      thread_product_ *= extent;
      c.threads_per_block = std::max(c.threads_per_block, thread_product_);
    }
    if (op->for_kind == ForKind::kUnrolled) c.unrolled_iterations += weight_ * extent;
    if (op->for_kind == ForKind::kVectorized) c.vectorized_lanes += weight_ * extent;
    const double saved = weight_, saved_blocks = block_product_, saved_threads = thread_product_;
    weight_ *= extent;
    Visit(op->body);
    weight_ = saved;
    block_product_ = saved_blocks;
    thread_product_ = saved_threads;
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
  void Visit_(const AllocateNode* op) override {
    double elements = 1;
    for (const auto& d : op->buffer->shape) {
      const int64_t* n = AsConstInt(d);
      elements *= n ? static_cast<double>(*n) : 1.0;
    }
    const double bytes = elements * BytesOf(op->buffer->dtype);
    if (op->buffer->scope == Scope::kShared) c.shared_bytes += bytes;
    if (op->buffer->scope == Scope::kLocal) c.local_bytes += bytes;
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
};

float Log2p(double x) { return static_cast<float>(std::log2(1.0 + std::max(0.0, x))); }

}  // namespace

ProgramCounts CountProgram(const PrimFunc& lowered) {
  Counter counter;
  if (lowered.body) counter.Visit(lowered.body);
  return counter.c;
}

const std::vector<std::string>& FeatureNames() {
  static const std::vector<std::string> names = {
      "float_add",      "float_mul",        "float_div",        "float_min_max",     "float_compare",
      "int_arith",      "int_compare",      "selects",          "calls",             "casts",
      "global_loads",   "shared_loads",     "local_loads",      "global_stores",     "shared_stores",
      "local_stores",   "global_bytes",     "barriers",         "grid",              "threads_per_block",
      "unrolled_iterations", "vectorized_lanes", "shared_bytes", "local_bytes",     "arithmetic_intensity",
  };
  return names;
}

std::vector<float> ExtractFeatures(const PrimFunc& lowered) {
  const ProgramCounts c = CountProgram(lowered);
  const double flops = c.float_add + c.float_mul + c.float_div + c.float_min_max;
  return {Log2p(c.float_add),        Log2p(c.float_mul),          Log2p(c.float_div),
          Log2p(c.float_min_max),    Log2p(c.float_compare),      Log2p(c.int_arith),
          Log2p(c.int_compare),      Log2p(c.selects),            Log2p(c.calls),
          Log2p(c.casts),            Log2p(c.global_loads),       Log2p(c.shared_loads),
          Log2p(c.local_loads),      Log2p(c.global_stores),      Log2p(c.shared_stores),
          Log2p(c.local_stores),     Log2p(c.global_bytes),       Log2p(c.barriers),
          Log2p(c.grid),             Log2p(c.threads_per_block),  Log2p(c.unrolled_iterations),
          Log2p(c.vectorized_lanes), Log2p(c.shared_bytes),       Log2p(c.local_bytes),
          Log2p(flops / (c.global_bytes + 1.0))};
}

}  // namespace autotune::costmodel
