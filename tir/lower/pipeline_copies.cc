#include "tir/lower/pipeline_copies.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tir/functor.h"
#include "tir/lower/register_staging.h"
#include "tir/transform/replace_buffers.h"
#include "tir/transform/substitute.h"

namespace autotune::tir {
namespace {

// Per buffer: how many loads and stores name it.
class AccessCounter : public IRVisitor {
 public:
  void Visit_(const BufferLoadNode* op) override {
    ++count[op->buffer.get()];
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    ++count[op->buffer.get()];
    VisitFields(op);
  }
  std::unordered_map<const BufferNode*, int64_t> count;
};

// What a candidate fill statement touches.
class FillScanner : public IRVisitor {
 public:
  void Visit_(const BufferLoadNode* op) override {
    if (op->buffer->scope == Scope::kShared) reads_shared = true;
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    written.insert(op->buffer.get());
    VisitFields(op);
  }
  void Visit_(const BarrierNode*) override { barrier = true; }
  std::unordered_set<const BufferNode*> written;
  bool reads_shared = false;
  bool barrier = false;
};

class StoreFinder : public IRVisitor {
 public:
  explicit StoreFinder(const std::unordered_set<const BufferNode*>& buffers) : buffers_(buffers) {}
  void Visit_(const BufferStoreNode* op) override {
    found |= buffers_.count(op->buffer.get()) > 0;
    VisitFields(op);
  }
  bool found = false;

 private:
  const std::unordered_set<const BufferNode*>& buffers_;
};

// Adds the slot's offset to the index of every load (or store) of the given buffers.
class SlotOffset : public IRMutator {
 public:
  SlotOffset(const std::unordered_map<const BufferNode*, Expr>& offsets, bool stores)
      : offsets_(offsets), stores_(stores) {}
  Expr Mutate_(const BufferLoadNode* op, const Expr& self) override {
    Expr e = MutateFields(op, self);
    const auto* load = As<BufferLoadNode>(e);
    auto it = offsets_.find(load->buffer.get());
    if (stores_ || it == offsets_.end()) return e;
    return Load(load->buffer, {Add(load->indices[0], In(load->indices[0]->dtype, it->second))});
  }
  Stmt Mutate_(const BufferStoreNode* op, const Stmt& self) override {
    Stmt s = MutateFields(op, self);
    const auto* store = As<BufferStoreNode>(s);
    auto it = offsets_.find(store->buffer.get());
    if (!stores_ || it == offsets_.end()) return s;
    return Store(store->buffer, store->value, {Add(store->indices[0], In(store->indices[0]->dtype, it->second))});
  }

 private:
  static Expr In(DType t, const Expr& e) { return e->dtype == t ? e : Cast(t, e); }

  const std::unordered_map<const BufferNode*, Expr>& offsets_;
  bool stores_;
};

class Pipeliner : public IRMutator {
 public:
  explicit Pipeliner(const Stmt& body) { counter_.Visit(body); }

  // Old buffer -> its replacement with a slot per stage.
  std::unordered_map<const BufferNode*, Buffer> slotted;

  Stmt Mutate_(const ForNode* op, const Stmt& self) override {
    Stmt s = MutateFields(op, self);  // inner loops first
    const auto* f = As<ForNode>(s);
    if (f->for_kind == ForKind::kThreadBinding || f->for_kind == ForKind::kVectorized) return s;
    Stmt piped = Pipeline(f);
    return piped ? piped : s;
  }

 private:
  static bool PlainBarrier(const Stmt& s) {
    const auto* b = As<BarrierNode>(s);
    return b && b->async_wait < 0;
  }

  // The rewritten loop, or null when it does not have the shape.
  Stmt Pipeline(const ForNode* f) {
    const int64_t* n = AsConstInt(f->extent);
    const auto* seq = As<SeqNode>(f->body);
    if (!n || *n < 2 || !seq || seq->stmts.size() < 4 || !PlainBarrier(seq->stmts[0])) return nullptr;
    // The fills: statements up to the second barrier.
    size_t end = 1;
    std::unordered_set<const BufferNode*> buffers;
    for (; end < seq->stmts.size() && !PlainBarrier(seq->stmts[end]); ++end) {
      FillScanner scan;
      scan.Visit(seq->stmts[end]);
      if (scan.barrier || scan.reads_shared || scan.written.empty()) return nullptr;
      for (const BufferNode* b : scan.written) {
        if (b->scope != Scope::kShared || b->pipeline_stages < 2 || slotted.count(b) || b->shape.size() != 1 ||
            !AsConstInt(b->shape[0])) {
          return nullptr;
        }
        buffers.insert(b);
      }
    }
    if (end == 1 || end + 1 >= seq->stmts.size()) return nullptr;
    std::vector<Stmt> fills(seq->stmts.begin() + 1, seq->stmts.begin() + static_cast<std::ptrdiff_t>(end));
    std::vector<Stmt> compute(seq->stmts.begin() + static_cast<std::ptrdiff_t>(end) + 1, seq->stmts.end());
    const Stmt fill = Seq(fills);
    const Stmt work = Seq(compute);
    // The compute only reads the copies, and nothing outside this loop touches them.
    StoreFinder writes(buffers);
    writes.Visit(work);
    if (writes.found) return nullptr;
    AccessCounter inside;
    inside.Visit(f->body);
    for (const BufferNode* b : buffers) {
      if (inside.count[b] != counter_.count[b]) return nullptr;
    }

    int64_t stages = *n;
    for (const BufferNode* b : buffers) stages = std::min(stages, b->pipeline_stages);
    return Rewrite(f, fill, work, buffers, stages);
  }

  Stmt Rewrite(const ForNode* f, const Stmt& fill, const Stmt& work, const std::unordered_set<const BufferNode*>& buffers,
               int64_t stages) {
    const Var& v = f->var;
    const DType t = v->dtype;
    auto at = [&](const Stmt& s, const Expr& step) {  // `s` for iteration `step` (counted from lo)
      return Substitute(s, [&](const VarNode* x) { return x == v.get() ? Add(f->min, step) : nullptr; });
    };
    auto slot = [&](const Stmt& s, const Expr& step, bool stores) {  // `s` on slot `step` % stages
      std::unordered_map<const BufferNode*, Expr> offsets;
      for (const BufferNode* b : buffers) {
        offsets[b] = FloorMod(step, IntImm(stages, t)) * IntImm(*AsConstInt(b->shape[0]), t);
      }
      return SlotOffset(offsets, stores).Mutate(s);
    };
    std::vector<Stmt> prologue = {Barrier()};
    for (int64_t s = 0; s + 1 < stages; ++s) {
      prologue.push_back(slot(at(fill, IntImm(s, t)), IntImm(s, t), true));
      if (s + 2 < stages) prologue.push_back(Barrier(s + 1));  // closes tile s's group; never waits
    }
    const Expr step = Sub(v, f->min);
    const Expr ahead = Add(step, IntImm(stages - 1, t));
    const Expr more = LT(ahead, f->extent);
    const Stmt next = slot(at(fill, ahead), ahead, true);
    const Stmt now = slot(work, step, false);
    Stmt body = Seq({Barrier(stages - 2), IfThenElse(more, next), now});
    // Copies that cannot be asynchronous load before the arithmetic and store after it.
    if (auto staged = StageSynchronousFills(next, buffers)) {
      body = Seq({Barrier(stages - 2),
                  Allocate(staged->stage, Seq({IfThenElse(more, staged->loads), now, IfThenElse(more, staged->stores)}))});
    }
    prologue.push_back(For(v, f->min, f->extent, f->for_kind, body, f->tag, f->auto_unroll_max_step));
    for (const BufferNode* b : buffers) {
      auto more = std::make_shared<BufferNode>(*b);
      more->shape = {IntImm(stages * *AsConstInt(b->shape[0]), b->shape[0]->dtype)};
      more->pipeline_stages = stages;  // what the loop allowed, which may be fewer than asked for
      more->async_fill = true;
      slotted[b] = more;
    }
    return Seq(prologue);
  }

  AccessCounter counter_;
};

}  // namespace

Stmt PipelineCopies(const Stmt& s) {
  Pipeliner p(s);
  Stmt out = p.Mutate(s);
  if (p.slotted.empty()) return s;
  return ReplaceBuffers(out, p.slotted);
}

}  // namespace autotune::tir
