#include "tir/lower/inject_virtual_thread.h"

#include <unordered_map>
#include <unordered_set>

#include "tir/analysis/barriers.h"
#include "tir/functor.h"

namespace autotune::tir {
namespace {

using BufferSet = std::unordered_set<const BufferNode*>;

// Whether a subtree uses `var` or accesses (reads or writes) a buffer of `buffers`.
class DependenceFinder : public IRVisitor {
 public:
  DependenceFinder(const VarNode* var, const BufferSet& buffers) : var_(var), buffers_(buffers) {}
  bool found = false;

  void Visit_(const VarNode* op) override { found |= op == var_; }
  void Visit_(const BufferLoadNode* op) override {
    found |= buffers_.count(op->buffer.get()) > 0;
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    found |= buffers_.count(op->buffer.get()) > 0;
    VisitFields(op);
  }

 private:
  const VarNode* var_;
  const BufferSet& buffers_;
};

template <class Node>
bool DependsOn(const Node& n, const VarNode* var, const BufferSet& buffers) {
  DependenceFinder f(var, buffers);
  f.Visit(n);
  return f.found;
}

// The buffers whose contents depend on the virtual thread: stored with an index or value that uses
// the vthread var or reads such a buffer, or stored under a loop bound or condition that does.
// Computed to a fixpoint, since a dependent buffer makes its readers dependent.
class TouchedBuffers : public IRVisitor {
 public:
  TouchedBuffers(const VarNode* var, BufferSet* touched) : var_(var), touched_(touched) {}
  bool changed = false;

  void Visit_(const ForNode* op) override {
    bool dep = Depends(op->min) || Depends(op->extent);
    control_ += dep;
    Visit(op->body);
    control_ -= dep;
  }
  void Visit_(const IfThenElseNode* op) override {
    bool dep = Depends(op->cond);
    control_ += dep;
    Visit(op->then_case);
    if (op->else_case) Visit(op->else_case);
    control_ -= dep;
  }
  void Visit_(const BufferStoreNode* op) override {
    if (touched_->count(op->buffer.get())) return;
    bool dep = control_ > 0 || Depends(op->value);
    for (const auto& i : op->indices) dep = dep || Depends(i);
    if (dep) {
      touched_->insert(op->buffer.get());
      changed = true;
    }
  }
  // Expressions hold no stores.
  void Visit_(const BufferLoadNode*) override {}

 private:
  bool Depends(const Expr& e) const { return DependsOn(e, var_, *touched_); }
  const VarNode* var_;
  BufferSet* touched_;
  int control_ = 0;
};

BufferSet ComputeTouched(const VarNode* var, const Stmt& body) {
  BufferSet touched;
  for (;;) {
    TouchedBuffers t(var, &touched);
    t.Visit(body);
    if (!t.changed) return touched;
  }
}

// Inside one copy of the vthread loop: uses of the vthread var become `new_var`, and accesses of an
// expanded buffer get the virtual thread index as new leading index.
class CopyRewriter : public IRMutator {
 public:
  CopyRewriter(const VarNode* var, Expr new_var, Expr thread_index,
               const std::unordered_map<const BufferNode*, Buffer>& expanded)
      : var_(var), new_var_(std::move(new_var)), thread_index_(std::move(thread_index)), expanded_(expanded) {}

  Expr Mutate_(const VarNode* op, const Expr& self) override { return op == var_ ? new_var_ : self; }
  Expr Mutate_(const BufferLoadNode* op, const Expr& self) override {
    Expr e = MutateFields(op, self);
    const auto* load = As<BufferLoadNode>(e);
    auto it = expanded_.find(load->buffer.get());
    if (it == expanded_.end()) return e;
    std::vector<Expr> indices{Index(load->indices)};
    indices.insert(indices.end(), load->indices.begin(), load->indices.end());
    return Load(it->second, std::move(indices));
  }
  Stmt Mutate_(const BufferStoreNode* op, const Stmt& self) override {
    Stmt s = MutateFields(op, self);
    const auto* store = As<BufferStoreNode>(s);
    auto it = expanded_.find(store->buffer.get());
    if (it == expanded_.end()) return s;
    std::vector<Expr> indices{Index(store->indices)};
    indices.insert(indices.end(), store->indices.begin(), store->indices.end());
    return Store(it->second, store->value, std::move(indices));
  }

 private:
  // The virtual thread index in the dtype of the other indices (int32 unless they are int64).
  Expr Index(const std::vector<Expr>& others) const {
    DType t = others.empty() ? thread_index_->dtype : others[0]->dtype;
    return Cast(t, thread_index_);
  }
  const VarNode* var_;
  Expr new_var_;
  Expr thread_index_;
  const std::unordered_map<const BufferNode*, Buffer>& expanded_;
};

// Pushes one vthread loop (var, min, extent) into its body.
class VThreadInjector {
 public:
  VThreadInjector(const ForNode* loop, BufferSet touched) : loop_(loop), touched_(std::move(touched)) {}

  Stmt Inject(const Stmt& s) {
    if (!Depends(s)) return s;
    if (const auto* seq = As<SeqNode>(s)) {
      std::vector<Stmt> stmts;
      stmts.reserve(seq->stmts.size());
      for (const auto& c : seq->stmts) stmts.push_back(Inject(c));
      return Seq(std::move(stmts));
    }
    if (const auto* f = As<ForNode>(s)) {
      if (f->for_kind != ForKind::kVectorized && !Depends(f->min) && !Depends(f->extent)) {
        return For(f->var, f->min, f->extent, f->for_kind, Inject(f->body), f->tag, f->auto_unroll_max_step);
      }
      return Wrap(s);
    }
    if (const auto* ite = As<IfThenElseNode>(s)) {
      if (!Depends(ite->cond)) {
        return IfThenElse(ite->cond, Inject(ite->then_case), ite->else_case ? Inject(ite->else_case) : nullptr);
      }
      return Wrap(s);
    }
    if (const auto* alloc = As<AllocateNode>(s)) {
      Buffer buffer = alloc->buffer;
      if (touched_.count(buffer.get())) {
        buffer = Expand(buffer);
        expanded_[alloc->buffer.get()] = buffer;
      }
      return Allocate(buffer, Inject(alloc->body));
    }
    return Wrap(s);
  }

 private:
  bool Depends(const Stmt& s) const { return DependsOn(s, loop_->var.get(), touched_); }
  bool Depends(const Expr& e) const { return DependsOn(e, loop_->var.get(), touched_); }

  Buffer Expand(const Buffer& b) const {
    const int64_t* n = AsConstInt(loop_->extent);
    AUTOTUNE_CHECK(n != nullptr, "a vthread loop whose buffers are expanded needs a constant extent");
    std::vector<Expr> shape{IntImm(*n)};
    shape.insert(shape.end(), b->shape.begin(), b->shape.end());
    std::vector<Expr> strides;
    if (!b->strides.empty()) {
      strides.push_back(BufferElemCount(b));
      strides.insert(strides.end(), b->strides.begin(), b->strides.end());
    }
    return WithFlagsOf(MakeBuffer(b->name, b->dtype, std::move(shape), b->scope, std::move(strides)), *b);
  }

  Stmt Wrap(const Stmt& s) const {
    AUTOTUNE_CHECK(!ContainsBarrier(s), "a barrier depends on a virtual thread");
    Var v = MakeVar(loop_->var->name, loop_->var->dtype);
    Expr index = IsConstInt(loop_->min, 0) ? Expr(v) : Sub(v, loop_->min);
    Stmt body = CopyRewriter(loop_->var.get(), v, index, expanded_).Mutate(s);
    return For(v, loop_->min, loop_->extent, ForKind::kUnrolled, body);
  }

  const ForNode* loop_;
  BufferSet touched_;
  std::unordered_map<const BufferNode*, Buffer> expanded_;
};

class VThreadRemover : public IRMutator {
 public:
  Stmt Mutate_(const ForNode* op, const Stmt& self) override {
    Stmt s = MutateFields(op, self);  // inner vthread loops first
    const auto* f = As<ForNode>(s);
    if (f->tag != ThreadTag::kVThread) return s;
    BufferSet touched = ComputeTouched(f->var.get(), f->body);
    return VThreadInjector(f, std::move(touched)).Inject(f->body);
  }
};

}  // namespace

Stmt InjectVirtualThread(const Stmt& s) { return VThreadRemover().Mutate(s); }

}  // namespace autotune::tir
