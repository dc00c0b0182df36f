#include "tir/lower/register_staging.h"

#include <vector>

#include "tir/analysis/packed_copy.h"
#include "tir/functor.h"

namespace autotune::tir {
namespace {

// Whether CUDA issues `st` asynchronously: a float32 store, or the store of a packed copy from
// global memory (plain, or zero-padded 16 bytes at a time).
bool Asynchronous(const BufferStoreNode* st, const ForNode* vector_loop) {
  if (!IsHalf(st->buffer->dtype)) return true;
  if (!vector_loop) return false;
  const std::optional<PackedCopy> copy = MatchPackedCopy(vector_loop);
  return copy && copy->store == st && copy->src->buffer->scope == Scope::kGlobal &&
         (!copy->inside || copy->lanes * BytesOf(st->buffer->dtype) == 16);
}

// One of the two parts: every staged store rewritten (into the stage, or from it), the other
// stores kept (loads) or dropped (stores).
class Splitter : public IRMutator {
 public:
  Splitter(const std::unordered_set<const BufferNode*>& buffers, Buffer stage, bool loads)
      : buffers_(buffers), stage_(std::move(stage)), loads_(loads) {}
  int64_t size = 0;        // stage elements used so far
  bool bounded = true;     // every loop around a staged store has a constant extent

  Stmt Mutate_(const ForNode* op, const Stmt& self) override {
    if (op->for_kind == ForKind::kThreadBinding) return MutateFields(op, self);
    const int64_t* min = AsConstInt(op->min);
    const int64_t* extent = AsConstInt(op->extent);
    if (!min || !extent) {
      loops_.push_back({op, 0});
      Stmt s = MutateFields(op, self);
      loops_.pop_back();
      return s;
    }
    loops_.push_back({op, *extent});
    Stmt s = MutateFields(op, self);
    loops_.pop_back();
    const auto* f = As<ForNode>(s);
    // A vectorized loop whose lanes now store registers (or nothing) is an unrolled one.
    if (f && f->for_kind == ForKind::kVectorized && s != self) {
      return For(f->var, f->min, f->extent, ForKind::kUnrolled, f->body, f->tag, f->auto_unroll_max_step);
    }
    return s;
  }
  Stmt Mutate_(const BufferStoreNode* op, const Stmt& self) override {
    const ForNode* vector_loop = !loops_.empty() && loops_.back().loop->for_kind == ForKind::kVectorized ? loops_.back().loop : nullptr;
    if (!buffers_.count(op->buffer.get()) || Asynchronous(op, vector_loop)) return loads_ ? self : Seq({});
    // Its slot in the stage: the loops around it, row-major, after the earlier stores' slots.
    Expr index = IntImm(size, DType::kInt32);
    int64_t span = 1;
    for (auto it = loops_.rbegin(); it != loops_.rend(); ++it) {
      if (it->extent <= 0) {
        bounded = false;
        return self;
      }
      Expr offset = Sub(it->loop->var, it->loop->min);
      if (offset->dtype != DType::kInt32) offset = Cast(DType::kInt32, offset);
      index = Add(index, Mul(offset, IntImm(span, DType::kInt32)));
      span *= it->extent;
    }
    size += span;
    if (loads_) return Store(stage_, op->value, {index});
    return Store(op->buffer, Load(stage_, {index}), op->indices);
  }

 private:
  struct Around {
    const ForNode* loop;
    int64_t extent;  // 0: not constant
  };
  const std::unordered_set<const BufferNode*>& buffers_;
  Buffer stage_;
  bool loads_;
  std::vector<Around> loops_;
};

}  // namespace

std::optional<StagedFill> StageSynchronousFills(const Stmt& fill, const std::unordered_set<const BufferNode*>& buffers,
                                                int64_t max_elements) {
  std::optional<DType> type;
  for (const BufferNode* b : buffers) {
    if (IsHalf(b->dtype)) type = b->dtype;
  }
  if (!type) return std::nullopt;
  // Sized after a first pass; buffers of other 16-bit types than `type` would need a stage of their own.
  Buffer probe = MakeBuffer("stage", *type, {IntImm(1)}, Scope::kLocal);
  Splitter count(buffers, probe, true);
  count.Mutate(fill);
  if (!count.bounded || count.size == 0 || count.size > max_elements) return std::nullopt;
  for (const BufferNode* b : buffers) {
    if (IsHalf(b->dtype) && b->dtype != *type) return std::nullopt;
  }
  Buffer stage = MakeBuffer("stage", *type, {IntImm(count.size)}, Scope::kLocal);
  Splitter loads(buffers, stage, true), stores(buffers, stage, false);
  return StagedFill{stage, loads.Mutate(fill), stores.Mutate(fill)};
}

}  // namespace autotune::tir
