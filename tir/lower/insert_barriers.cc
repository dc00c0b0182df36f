#include "tir/lower/insert_barriers.h"

#include "tir/analysis/thread_dependence.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tir/functor.h"

namespace autotune::tir {
namespace {

// The planner walks a thread scope with the set of shared-buffer accesses made since the last barrier.
// Each access carries the level of the node that owns it: the Seq where it was made (its depth), or a
// loop / conditional for accesses of its bounds / condition and for accesses carried from the previous
// iteration (depth + 1, the level of its body). A later conflicting access must be separated from it by
// a barrier in that owner, so a conflict is handed up to the node owning the deepest conflicting access.
// Accesses a subtree makes itself are returned tagged kNew; the receiving owner retags them.
constexpr int kNew = std::numeric_limits<int>::max();

using Access = std::pair<const BufferNode*, bool>;  // (buffer, is_write)
using State = std::map<Access, int>;                // access -> owner level

void AddAccess(State* s, const Access& a, int level) {
  auto [it, inserted] = s->emplace(a, level);
  if (!inserted) it->second = std::max(it->second, level);
}

State Merge(State a, const State& b) {
  for (const auto& [k, v] : b) AddAccess(&a, k, v);
  return a;
}

// Tags >= `level` become `to`.
State Retag(State s, int level, int to) {
  for (auto& [k, v] : s) {
    if (v >= level) v = to;
  }
  return s;
}

// Only the accesses owned above `level`.
State Below(const State& s, int level) {
  State out;
  for (const auto& [k, v] : s) {
    if (v < level) out.emplace(k, v);
  }
  return out;
}

// Deepest owner level of an access of `in` that conflicts with `acc` (read after write or write after
// read of one buffer), or -1.
int Conflict(const State& in, const State& acc) {
  int level = -1;
  for (const auto& [a, unused] : acc) {
    auto it = in.find(Access{a.first, !a.second});
    if (it != in.end()) level = std::max(level, it->second);
  }
  return level;
}

// Shared-buffer accesses of an expression, or of a store's own expressions and target.
class SharedAccessCollector : public IRVisitor {
 public:
  explicit SharedAccessCollector(State* out) : out_(out) {}
  void Visit_(const BufferLoadNode* op) override {
    if (op->buffer->scope == Scope::kShared) AddAccess(out_, {op->buffer.get(), false}, kNew);
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    if (op->buffer->scope == Scope::kShared) AddAccess(out_, {op->buffer.get(), true}, kNew);
    VisitFields(op);
  }

 private:
  State* out_;
};

State ExprAccesses(const std::vector<Expr>& exprs) {
  State s;
  SharedAccessCollector c(&s);
  for (const auto& e : exprs) {
    if (e) c.Visit(e);
  }
  return s;
}

struct Summary {
  bool reads = false;    // reads a shared buffer
  bool writes = false;   // writes a shared buffer
  bool barrier = false;  // contains a barrier
};

struct Plan {
  Stmt stmt;          // the statement with barriers, when conflict < 0
  State out;          // accesses not yet synchronized after it
  int conflict = -1;  // >= 0: a barrier is needed before the statement, owned at this level
};

Plan Need(int level) { return Plan{nullptr, {}, level}; }

class Planner {
 public:
  explicit Planner(const VarNode* thread_var) { thread_vars_.insert(thread_var); }

  Plan Run(const Stmt& s, const State& in, int depth, bool uniform) {
    const Summary& sum = Summarize(s);
    if (!sum.reads && !sum.writes && !sum.barrier) return Plan{s, in};
    switch (s->kind) {
      case StmtKind::kBarrier: return Plan{s, {}};
      case StmtKind::kBufferStore:
      case StmtKind::kTensorize: {  // a tensorized tile is one unit: a barrier goes before it, never inside
        State acc;
        SharedAccessCollector(&acc).Visit(s);
        if (int c = Conflict(in, acc); c >= 0) return Need(c);
        return Plan{s, Merge(in, acc)};
      }
      case StmtKind::kAllocate: {
        const auto* op = As<AllocateNode>(s);
        Plan r = Run(op->body, in, depth, uniform);
        if (r.conflict < 0 && r.stmt != op->body) r.stmt = Allocate(op->buffer, r.stmt);
        else if (r.conflict < 0) r.stmt = s;
        return r;
      }
      case StmtKind::kIfThenElse: return RunIf(As<IfThenElseNode>(s), s, in, depth, uniform);
      case StmtKind::kFor: return RunFor(As<ForNode>(s), s, in, depth, uniform);
      case StmtKind::kSeq: return RunSeq(As<SeqNode>(s), s, in, depth, uniform);
    }
    return Plan{s, in};
  }

 private:
  bool ThreadDependent(const Expr& e) const {
    // Conservative: any load may differ per thread (memory may have been written per thread).
    return IsThreadDependent(e, thread_vars_, LoadDependence::kAnyLoad);
  }

  const Summary& Summarize(const Stmt& s) {
    auto it = summaries_.find(s.get());
    if (it != summaries_.end()) return it->second.second;
    Summary sum;
    auto add_exprs = [&](const std::vector<Expr>& exprs) {
      for (const auto& [a, unused] : ExprAccesses(exprs)) (a.second ? sum.writes : sum.reads) = true;
    };
    auto add = [&](const Stmt& c) {
      if (!c) return;
      const Summary& cs = Summarize(c);
      sum.reads |= cs.reads;
      sum.writes |= cs.writes;
      sum.barrier |= cs.barrier;
    };
    if (const auto* f = As<ForNode>(s)) {
      add_exprs({f->min, f->extent});
      add(f->body);
    } else if (As<BufferStoreNode>(s) || As<TensorizeNode>(s)) {
      State acc;
      SharedAccessCollector(&acc).Visit(s);
      for (const auto& [a, unused] : acc) (a.second ? sum.writes : sum.reads) = true;
    } else if (const auto* al = As<AllocateNode>(s)) {
      add(al->body);
    } else if (const auto* ite = As<IfThenElseNode>(s)) {
      add_exprs({ite->cond});
      add(ite->then_case);
      add(ite->else_case);
    } else if (const auto* seq = As<SeqNode>(s)) {
      for (const auto& c : seq->stmts) add(c);
    } else if (As<BarrierNode>(s)) {
      sum.barrier = true;
    }
    return summaries_.emplace(s.get(), std::make_pair(s, sum)).first->second.second;
  }

  // Plans `body` of a loop or conditional entered with `state`, where accesses tagged >= `own` belong
  // to that loop or conditional: a conflict with them gets a barrier at the start of `body` when
  // `can_insert`, and is ignored otherwise (divergent code).
  Plan RunBody(const Stmt& body, const State& state, int own, bool uniform, bool can_insert) {
    Plan r = Run(body, state, own, uniform);
    if (r.conflict < own) return r;
    if (can_insert) {
      r = Run(body, {}, own, uniform);
      AUTOTUNE_CHECK(r.conflict < 0, "barrier planning: conflict right after a barrier");
      r.stmt = Seq({Barrier(), r.stmt});
      return r;
    }
    r = Run(body, Below(state, own), own, uniform);
    if (r.conflict >= 0) return r;
    r.out = Merge(state, r.out);
    return r;
  }

  Plan RunIf(const IfThenElseNode* op, const Stmt& self, const State& in, int depth, bool uniform) {
    State acc = ExprAccesses({op->cond});
    if (int c = Conflict(in, acc); c >= 0) return Need(c);
    bool u = uniform && !ThreadDependent(op->cond);
    int own = depth + 1;
    State st = Merge(in, Retag(acc, 0, own));
    Plan t = RunBody(op->then_case, st, own, u, u);
    if (t.conflict >= 0) return t;
    Plan e{nullptr, st};
    if (op->else_case) {
      e = RunBody(op->else_case, st, own, u, u);
      if (e.conflict >= 0) return e;
    }
    Stmt s = self;
    if (t.stmt != op->then_case || e.stmt != op->else_case) s = IfThenElse(op->cond, t.stmt, e.stmt);
    return Plan{s, Retag(Merge(t.out, e.out), own, kNew)};
  }

  Plan RunFor(const ForNode* op, const Stmt& self, const State& in, int depth, bool uniform) {
    auto rebuild = [&](const Plan& r) {
      if (r.stmt == op->body) return self;
      return For(op->var, op->min, op->extent, op->for_kind, r.stmt, op->tag, op->auto_unroll_max_step);
    };
    if (op->for_kind == ForKind::kThreadBinding) {
      // More threads, not iterations in time: transparent.
      thread_vars_.insert(op->var.get());
      Plan r = Run(op->body, in, depth, uniform);
      if (r.conflict < 0) r.stmt = rebuild(r);
      return r;
    }
    State acc = ExprAccesses({op->min, op->extent});
    if (int c = Conflict(in, acc); c >= 0) return Need(c);
    bool u = uniform && !ThreadDependent(op->min) && !ThreadDependent(op->extent);
    if (!u) thread_vars_.insert(op->var.get());
    int own = depth + 1;
    State entry = Merge(in, Retag(acc, 0, own));
    Plan r = RunBody(op->body, entry, own, u, u);
    if (r.conflict >= 0) return r;
    const Summary& sum = Summarize(op->body);
    if (u && sum.reads && sum.writes) {
      // Iterate to the steady state: what one iteration leaves unsynchronized enters the next.
      for (;;) {
        State next = entry;
        for (const auto& [a, level] : r.out) {
          if (level >= own) AddAccess(&next, a, own);
        }
        if (next == entry) break;
        entry = std::move(next);
        r = RunBody(op->body, entry, own, u, u);
        if (r.conflict >= 0) return r;
      }
    }
    r.stmt = rebuild(r);
    r.out = Retag(r.out, own, kNew);
    return r;
  }

  Plan RunSeq(const SeqNode* op, const Stmt& self, const State& in, int depth, bool uniform) {
    const int own = depth;
    State state = in;
    std::vector<Stmt> stmts;
    bool changed = false;
    for (const auto& c : op->stmts) {
      Plan r = Run(c, state, own + 1, uniform);
      if (r.conflict >= 0) {
        if (r.conflict < own) return r;  // owned further out: the barrier goes there
        if (uniform) {
          stmts.push_back(Barrier());
          changed = true;
          state.clear();
          r = Run(c, state, own + 1, uniform);
          AUTOTUNE_CHECK(r.conflict < 0, "barrier planning: conflict right after a barrier");
        } else {
          // Divergent code: a barrier here would deadlock; the conflict cannot be fixed.
          r = Run(c, Below(state, own), own + 1, uniform);
          if (r.conflict >= 0) return r;
          r.out = Merge(state, r.out);
        }
      }
      changed |= r.stmt != c;
      stmts.push_back(r.stmt);
      state = Retag(std::move(r.out), kNew, own);
    }
    return Plan{changed ? Seq(std::move(stmts)) : self, Retag(std::move(state), own, kNew)};
  }

  std::unordered_set<const VarNode*> thread_vars_;
  // Keyed by node; the node is kept alive so that its address cannot be reused by another one.
  std::unordered_map<const StmtNode*, std::pair<Stmt, Summary>> summaries_;
};

// Drops a barrier that directly follows another one in a sequence.
class AdjacentBarrierRemover : public IRMutator {
 public:
  Stmt Mutate_(const SeqNode* op, const Stmt& self) override {
    Stmt s = MutateFields(op, self);
    const auto* seq = As<SeqNode>(s);
    std::vector<Stmt> stmts;
    for (const auto& c : seq->stmts) {
      if (As<BarrierNode>(c) && !stmts.empty() && As<BarrierNode>(stmts.back())) continue;
      stmts.push_back(c);
    }
    if (stmts.size() == seq->stmts.size()) return s;
    return Seq(std::move(stmts));
  }
};

class ThreadScopeFinder : public IRMutator {
 public:
  Stmt Mutate_(const ForNode* op, const Stmt& self) override {
    if (!IsThreadTag(op->tag)) return MutateFields(op, self);
    Planner planner(op->var.get());
    Plan r = planner.Run(op->body, {}, 0, true);
    AUTOTUNE_CHECK(r.conflict < 0, "barrier planning: unresolved conflict at the thread scope");
    if (r.stmt == op->body) return self;
    Stmt body = AdjacentBarrierRemover().Mutate(r.stmt);
    return For(op->var, op->min, op->extent, op->for_kind, body, op->tag, op->auto_unroll_max_step);
  }
};

}  // namespace

Stmt InsertBarriers(const Stmt& s) { return ThreadScopeFinder().Mutate(s); }

}  // namespace autotune::tir
