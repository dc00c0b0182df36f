#include "tir/lower/storage_flatten.h"

#include <unordered_map>

#include "tir/analysis/int_bound.h"
#include "tir/functor.h"
#include "tir/transform/simplify.h"

namespace autotune::tir {
namespace {

// `e` (an integer expression) in dtype `t`; constants are rebuilt rather than cast.
Expr InDType(const Expr& e, DType t) {
  if (e->dtype == t) return e;
  if (const int64_t* v = AsConstInt(e)) return IntImm(*v, t);
  return Cast(t, e);
}

class Flattener : public IRMutator {
 public:
  Buffer Flat(const Buffer& b) {
    auto it = flat_.find(b.get());
    if (it != flat_.end()) return it->second;
    Expr count = Simplify(BufferElemCount(b), &analyzer_);
    Buffer nb = WithFlagsOf(MakeBuffer(b->name, b->dtype, {count}, b->scope), *b);
    flat_.emplace(b.get(), nb);
    return nb;
  }

  Buffer MutateBuffer(const Buffer& b) override { return Flat(b); }

  // Loop variables get their ranges while the body is flattened, so index arithmetic simplifies.
  Stmt Mutate_(const ForNode* op, const Stmt& self) override {
    Expr min = Mutate(op->min);
    Expr extent = Mutate(op->extent);
    analyzer_.Bind(op->var, LoopRange(min, extent));
    Stmt body = Mutate(op->body);
    analyzer_.Unbind(op->var);
    if (min == op->min && extent == op->extent && body == op->body) return self;
    return For(op->var, min, extent, op->for_kind, body, op->tag, op->auto_unroll_max_step);
  }

  Stmt Mutate_(const AllocateNode* op, const Stmt& self) override {
    for (const auto& e : op->buffer->shape) {
      AUTOTUNE_CHECK(AsConstInt(Simplify(e, &analyzer_)) != nullptr, "allocation with a non-constant shape");
    }
    for (const auto& e : op->buffer->strides) {
      AUTOTUNE_CHECK(AsConstInt(Simplify(e, &analyzer_)) != nullptr, "allocation with non-constant strides");
    }
    return MutateFields(op, self);
  }

  Expr Mutate_(const BufferLoadNode* op, const Expr& self) override {
    std::vector<Expr> indices;
    for (const auto& i : op->indices) indices.push_back(Mutate(i));
    return Load(Flat(op->buffer), {FlatIndex(op->buffer, indices)});
  }

  Stmt Mutate_(const BufferStoreNode* op, const Stmt& self) override {
    Expr value = Mutate(op->value);
    std::vector<Expr> indices;
    for (const auto& i : op->indices) indices.push_back(Mutate(i));
    return Store(Flat(op->buffer), value, {FlatIndex(op->buffer, indices)});
  }

 private:
  Expr FlatIndex(const Buffer& b, const std::vector<Expr>& indices) {
    if (indices.empty()) return IntImm(0);
    DType t = DType::kInt32;
    for (const auto& i : indices) {
      if (i->dtype == DType::kInt64) t = DType::kInt64;
    }
    std::vector<Expr> strides = BufferStrides(b);
    Expr sum;
    for (size_t k = 0; k < indices.size(); ++k) {
      Expr term = Mul(InDType(indices[k], t), InDType(Simplify(strides[k], &analyzer_), t));
      sum = sum ? Add(sum, term) : term;
    }
    return Simplify(sum, &analyzer_);
  }

  // [min, min + extent - 1] over all values of the bounds (a symbolic extent leaves it open above).
  IntBound LoopRange(const Expr& min, const Expr& extent) const {
    IntBound lo = analyzer_.Bound(min), ext = analyzer_.Bound(extent);
    IntBound r{lo.min, IntBound::kPosInf};
    int64_t last, hi;
    if (lo.HasFiniteMax() && ext.HasFiniteMax() && !__builtin_sub_overflow(ext.max, 1, &last) &&
        !__builtin_add_overflow(lo.max, last, &hi)) {
      r.max = hi;
    }
    if (r.HasFiniteMin() && r.max < r.min) r.max = r.min;  // empty loop: the body never runs
    return r;
  }

  BoundAnalyzer analyzer_;
  std::unordered_map<const BufferNode*, Buffer> flat_;
};

}  // namespace

PrimFunc StorageFlatten(const PrimFunc& f) {
  Flattener flattener;
  PrimFunc out;
  out.name = f.name;
  for (const auto& p : f.params) out.params.push_back(flattener.Flat(p));
  out.body = flattener.Mutate(f.body);
  out.packs = f.packs;  // their buffers as declared: PackFunc flattens its own
  out.vector_lanes = f.vector_lanes;
  return out;
}

}  // namespace autotune::tir
