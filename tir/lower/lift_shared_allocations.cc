#include "tir/lower/lift_shared_allocations.h"

#include <vector>

#include "tir/functor.h"

namespace autotune::tir {
namespace {

Stmt WrapAllocations(const std::vector<Buffer>& buffers, Stmt body) {
  for (size_t i = buffers.size(); i-- > 0;) body = Allocate(buffers[i], std::move(body));
  return body;
}

class Lifter : public IRMutator {
 public:
  Stmt Mutate_(const ForNode* op, const Stmt& self) override {
    if (op->for_kind != ForKind::kThreadBinding) return MutateFields(op, self);
    if (collector_ == nullptr) {
      // Outermost thread-bound loop: the kernel's top.
      std::vector<Buffer> top;
      collector_ = &top;
      Stmt s = Mutate_(op, self);
      collector_ = nullptr;
      return WrapAllocations(top, s);
    }
    if (!IsBlockTag(op->tag)) return MutateFields(op, self);
    // Shared allocations already at the top of the block body stay where they are.
    std::vector<Buffer> block;
    Stmt rest = op->body;
    while (const auto* a = As<AllocateNode>(rest)) {
      if (a->buffer->scope != Scope::kShared) break;
      block.push_back(a->buffer);
      rest = a->body;
    }
    size_t placed = block.size();
    std::vector<Buffer>* outer = collector_;
    collector_ = &block;
    Stmt body = Mutate(rest);
    collector_ = outer;
    if (block.size() == placed && body == rest) return self;
    body = WrapAllocations(block, body);
    return For(op->var, op->min, op->extent, op->for_kind, body, op->tag, op->auto_unroll_max_step);
  }

  Stmt Mutate_(const AllocateNode* op, const Stmt& self) override {
    if (collector_ == nullptr || op->buffer->scope != Scope::kShared) return MutateFields(op, self);
    for (const auto& e : op->buffer->shape) {
      AUTOTUNE_CHECK(AsConstInt(e) != nullptr, "shared allocation with a non-constant shape");
    }
    collector_->push_back(op->buffer);
    return Mutate(op->body);
  }

 private:
  std::vector<Buffer>* collector_ = nullptr;
};

}  // namespace

Stmt LiftSharedAllocations(const Stmt& s) { return Lifter().Mutate(s); }

}  // namespace autotune::tir
