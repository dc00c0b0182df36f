#include "tir/lower/unroll_loops.h"

#include <limits>
#include <vector>

#include "tir/int_arith.h"

namespace autotune::tir {
namespace {

constexpr int64_t kMaxSteps = std::numeric_limits<int64_t>::max();

struct VisitResult {
  Stmt stmt;
  int64_t steps = 0;    // statement executions of one run of the subtree
  bool rolled = false;  // a loop that is not unrolled is in the subtree
};

// `max_step` is the auto_unroll_max_step in effect (0: none).
VisitResult Visit(const Stmt& s, int64_t max_step) {
  if (const auto* seq = As<SeqNode>(s)) {
    VisitResult out;
    std::vector<Stmt> stmts;
    bool changed = false;
    for (const auto& c : seq->stmts) {
      VisitResult r = Visit(c, max_step);
      changed |= r.stmt != c;
      stmts.push_back(r.stmt);
      out.steps = AddOrCap(out.steps, r.steps, kMaxSteps);
      out.rolled |= r.rolled;
    }
    out.stmt = changed ? Seq(std::move(stmts)) : s;
    return out;
  }
  if (const auto* ite = As<IfThenElseNode>(s)) {
    VisitResult t = Visit(ite->then_case, max_step);
    VisitResult e{ite->else_case};
    if (ite->else_case) e = Visit(ite->else_case, max_step);
    VisitResult out;
    out.steps = AddOrCap(t.steps, e.steps, kMaxSteps);
    out.rolled = t.rolled || e.rolled;
    out.stmt = (t.stmt == ite->then_case && e.stmt == ite->else_case) ? s : IfThenElse(ite->cond, t.stmt, e.stmt);
    return out;
  }
  if (const auto* alloc = As<AllocateNode>(s)) {
    VisitResult r = Visit(alloc->body, max_step);
    if (r.stmt != alloc->body) r.stmt = Allocate(alloc->buffer, r.stmt);
    else r.stmt = s;
    return r;
  }
  if (const auto* f = As<ForNode>(s)) {
    VisitResult body = Visit(f->body, f->auto_unroll_max_step > 0 ? f->auto_unroll_max_step : max_step);
    const int64_t* extent = AsConstInt(f->extent);
    ForKind kind = f->for_kind;
    VisitResult out;
    if (kind == ForKind::kUnrolled && extent == nullptr) {
      kind = ForKind::kSerial;  // cannot unroll a loop of unknown trip count
      out.rolled = true;
      out.steps = body.steps;
    } else if (kind == ForKind::kUnrolled) {
      out.rolled = body.rolled;
      out.steps = MulOrCap(*extent, body.steps, kMaxSteps);
    } else if (kind == ForKind::kSerial && extent && max_step > 0 && !body.rolled &&
               MulOrCap(*extent, body.steps, kMaxSteps) <= max_step) {
      kind = ForKind::kUnrolled;
      out.steps = MulOrCap(*extent, body.steps, kMaxSteps);
    } else {
      out.rolled = true;
      out.steps = extent ? MulOrCap(*extent, body.steps, kMaxSteps) : body.steps;
    }
    out.stmt = (kind == f->for_kind && body.stmt == f->body)
                   ? s
                   : For(f->var, f->min, f->extent, kind, body.stmt, f->tag, f->auto_unroll_max_step);
    return out;
  }
  // Store, barrier.
  return VisitResult{s, 1, false};
}

}  // namespace

Stmt UnrollLoops(const Stmt& s) { return Visit(s, 0).stmt; }

}  // namespace autotune::tir
