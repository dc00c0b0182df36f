#include "tir/lower/pipeline_fragments.h"

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tir/analysis/gpu_validity.h"
#include "tir/analysis/tensor_intrinsics.h"
#include "tir/functor.h"
#include "tir/transform/replace_buffers.h"
#include "tir/transform/substitute.h"

namespace autotune::tir {
namespace {

// Which of the given buffers a statement reads and writes, whether it writes others, reads shared
// memory or holds a barrier.
class FragmentAccess : public IRVisitor {
 public:
  explicit FragmentAccess(const std::unordered_set<const BufferNode*>& fragments) : fragments_(fragments) {}
  void Visit_(const BufferLoadNode* op) override {
    reads_fragment |= fragments_.count(op->buffer.get()) > 0;
    reads_shared |= op->buffer->scope == Scope::kShared;
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    (fragments_.count(op->buffer.get()) ? writes_fragment : writes_other) = true;
    VisitFields(op);
  }
  void Visit_(const BarrierNode*) override { barrier = true; }
  bool reads_fragment = false, writes_fragment = false, writes_other = false, reads_shared = false, barrier = false;

 private:
  const std::unordered_set<const BufferNode*>& fragments_;
};

// The body of one mma step: its fragments, the statements loading them, and the rest.
struct StepBody {
  std::vector<Buffer> fragments;
  Stmt loads, compute;
};

std::optional<StepBody> SplitStep(const Stmt& body) {
  StepBody out;
  Stmt inner = body;
  std::unordered_set<const BufferNode*> set;
  while (const auto* a = As<AllocateNode>(inner)) {
    if (a->buffer->scope != Scope::kLocal) return std::nullopt;
    out.fragments.push_back(a->buffer);
    set.insert(a->buffer.get());
    inner = a->body;
  }
  const auto* seq = As<SeqNode>(inner);
  if (out.fragments.empty() || !seq || !HasTensorizedTiles(inner)) return std::nullopt;
  size_t loads = 0;
  for (; loads < seq->stmts.size(); ++loads) {
    FragmentAccess access(set);
    access.Visit(seq->stmts[loads]);
    if (access.barrier) return std::nullopt;
    if (!access.writes_fragment || access.writes_other || access.reads_fragment) break;
  }
  if (loads == 0 || loads == seq->stmts.size()) return std::nullopt;
  // The arithmetic reads registers only: after the moved barrier other warps may refill the shared
  // slot of this chunk.
  for (size_t i = loads; i < seq->stmts.size(); ++i) {
    FragmentAccess access(set);
    access.Visit(seq->stmts[i]);
    if (access.writes_fragment || access.reads_shared || access.barrier) return std::nullopt;
  }
  out.loads = Seq(std::vector<Stmt>(seq->stmts.begin(), seq->stmts.begin() + static_cast<std::ptrdiff_t>(loads)));
  out.compute = Seq(std::vector<Stmt>(seq->stmts.begin() + static_cast<std::ptrdiff_t>(loads), seq->stmts.end()));
  return out;
}

class FragmentPipeliner : public IRMutator {
 public:
  Stmt Mutate_(const ForNode* op, const Stmt& self) override {
    Stmt s = MutateFields(op, self);
    const auto* f = As<ForNode>(s);
    if (f->for_kind != ForKind::kSerial) return s;
    Stmt piped = Pipeline(f);
    return piped ? piped : s;
  }

 private:
  // The parts of a chunk loop's body after PipelineCopies.
  struct ChunkBody {
    Stmt barrier;      // barrier(async_wait = stages - 2)
    Stmt fill;         // if (more) refill a slot
    const ForNode* steps = nullptr;
    Buffer stage;      // register-staged fills: their stage, and
    Stmt staged_stores;  // if (more) store the stage into the slot
  };

  static std::optional<ChunkBody> MatchChunkBody(const Stmt& body) {
    const auto* seq = As<SeqNode>(body);
    if (!seq || seq->stmts.empty()) return std::nullopt;
    const auto* barrier = As<BarrierNode>(seq->stmts[0]);
    if (!barrier || barrier->async_wait < 0) return std::nullopt;
    ChunkBody out;
    out.barrier = seq->stmts[0];
    std::vector<Stmt> rest(seq->stmts.begin() + 1, seq->stmts.end());
    if (rest.size() == 1) {  // register-staged: allocate stage { fill; steps; stores }
      const auto* staged = As<AllocateNode>(rest[0]);
      const auto* inner = staged ? As<SeqNode>(staged->body) : nullptr;
      if (!inner || inner->stmts.size() != 3 || !As<IfThenElseNode>(inner->stmts[2])) return std::nullopt;
      out.stage = staged->buffer;
      out.staged_stores = inner->stmts[2];
      rest = {inner->stmts[0], inner->stmts[1]};
    }
    const auto* fill = rest.size() == 2 ? As<IfThenElseNode>(rest[0]) : nullptr;
    out.steps = rest.size() == 2 ? As<ForNode>(rest[1]) : nullptr;
    if (!fill || fill->else_case || !out.steps ||
        (out.steps->for_kind != ForKind::kSerial && out.steps->for_kind != ForKind::kUnrolled)) {
      return std::nullopt;
    }
    out.fill = rest[0];
    return out;
  }

  // The rewritten chunk loop, or null when it does not have the shape.
  static Stmt Pipeline(const ForNode* chunks) {
    const std::optional<ChunkBody> body = MatchChunkBody(chunks->body);
    if (!body) return nullptr;
    const int64_t* n = AsConstInt(body->steps->extent);
    if (!n || *n < 2 || *n % 2 != 0) return nullptr;
    const std::optional<StepBody> step = SplitStep(body->steps->body);
    if (!step) return nullptr;
    return Rewrite(chunks, *body, *n, *step);
  }

  static Stmt Rewrite(const ForNode* chunks, const ChunkBody& chunk, int64_t n, const StepBody& step) {
    std::unordered_map<const BufferNode*, Buffer> odd;  // the register set of odd steps
    for (const Buffer& b : step.fragments) {
      auto copy = std::make_shared<BufferNode>(*b);
      copy->name = b->name + "_odd";
      odd[b.get()] = copy;
    }
    const Var& v = chunks->var;
    const ForNode* steps = chunk.steps;
    // `s` for chunk `chunk` (null: this iteration's), step `k`, on the register set of k's parity.
    auto at = [&](const Stmt& s, const Expr& chunk_index, int64_t k) {
      const Expr step_k = Add(steps->min, IntImm(k, steps->var->dtype));
      Stmt r = Substitute(s, [&](const VarNode* x) -> Expr {
        if (x == steps->var.get()) return step_k;
        return x == v.get() ? chunk_index : nullptr;
      });
      return k % 2 ? ReplaceBuffers(r, odd) : r;
    };
    // Staged stores fill the slot of chunk v + stages - 1, read from the next-chunk loads of
    // iteration v + stages - 2: with two stages that is this iteration's last step, so they go before
    // the barrier; with more, after the last mma, which their loads then had the longest to reach.
    const bool stores_last = chunk.staged_stores && As<BarrierNode>(chunk.barrier)->async_wait >= 1;
    const Expr next = Add(v, IntImm(1, v->dtype));
    std::vector<Stmt> body = {chunk.fill};
    for (int64_t k = 0; k < n; ++k) {
      if (k + 1 < n) body.push_back(at(step.loads, nullptr, k + 1));
      if (k == n - 2) body.push_back(stores_last ? nullptr : chunk.staged_stores);
      if (k == n - 2) body.push_back(chunk.barrier);
      if (k == n - 1) body.push_back(IfThenElse(LT(next, Add(chunks->min, chunks->extent)), at(step.loads, next, 0)));
      body.push_back(at(step.compute, nullptr, k));
    }
    if (stores_last) body.push_back(chunk.staged_stores);
    Stmt iteration = chunk.stage ? Allocate(chunk.stage, Seq(body)) : Seq(body);
    Stmt loop = For(v, chunks->min, chunks->extent, chunks->for_kind, iteration, chunks->tag, chunks->auto_unroll_max_step);
    Stmt out = Seq({chunk.barrier, at(step.loads, chunks->min, 0), loop});
    for (auto it = step.fragments.rbegin(); it != step.fragments.rend(); ++it) {
      out = Allocate(*it, Allocate(odd.at(it->get()), out));
    }
    return out;
  }
};

}  // namespace

Stmt PipelineFragments(const Stmt& s) { return FragmentPipeliner().Mutate(s); }

void PipelineFragmentsWithinBudget(PrimFunc& f) {
  PrimFunc piped = f;
  piped.body = PipelineFragments(f.body);
  if (piped.body == f.body) return;
  if (CheckGpuValidity(piped) || !CheckGpuValidity(f)) f = std::move(piped);
}

}  // namespace autotune::tir
