#include "tir/transform/serialize_threads.h"

#include "tir/analysis/barriers.h"
#include "tir/analysis/thread_dependence.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tir/functor.h"

namespace autotune::tir {
namespace {

bool IsThreadLoop(const ForNode* op) { return op->for_kind == ForKind::kThreadBinding && IsThreadTag(op->tag); }

struct ThreadLoop {
  Var var;
  Expr min, extent;
  ThreadTag tag;
};

// A local buffer allocated outside the thread loops of one tag that all its accesses are inside
// (a register staging array, filled in one threadIdx.x loop and read in another): each of those
// threads has its own copy in CUDA, so on the C path it gets one too, buf[i] -> buf[t * n + i] with
// t the enclosing loop's thread index. `extent` is the largest of those loops'.
class InnerThreadAccesses : public IRVisitor {
 public:
  InnerThreadAccesses(const BufferNode* buf, const std::vector<ThreadLoop>& outer) : buf_(buf) {
    for (const auto& t : outer) outer_tags_.insert(static_cast<int>(t.tag));
  }
  std::optional<ThreadTag> tag;
  int64_t extent = 0;
  bool ok = true;

  void Visit_(const ForNode* op) override {
    const bool inner = op->for_kind == ForKind::kThreadBinding && IsThreadTag(op->tag) && !outer_tags_.count(static_cast<int>(op->tag));
    if (inner) around_.push_back(op);
    VisitFields(op);
    if (inner) around_.pop_back();
  }
  void Visit_(const BufferLoadNode* op) override {
    if (op->buffer.get() == buf_) Access();
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    if (op->buffer.get() == buf_) Access();
    VisitFields(op);
  }

 private:
  void Access() {
    const int64_t* n = around_.size() == 1 ? AsConstInt(around_[0]->extent) : nullptr;
    if (!n || (tag && *tag != around_[0]->tag)) {
      ok = false;
      return;
    }
    tag = around_[0]->tag;
    extent = std::max(extent, *n);
  }
  const BufferNode* buf_;
  std::unordered_set<int> outer_tags_;
  std::vector<const ForNode*> around_;
};

// Gives every thread its own copy of a local buffer: buf[i] -> new_buf[tid * n + i], or, with an
// inner tag, new_buf[(tid * inner + t) * n + i], t the index of the innermost enclosing loop of that
// tag (no tid: 0).
class ExpandLocal : public IRMutator {
 public:
  ExpandLocal(Buffer old_buf, Buffer new_buf, Expr tid, int64_t n, std::optional<ThreadTag> tag = std::nullopt,
              int64_t inner = 1)
      : old_(std::move(old_buf)), new_(std::move(new_buf)), tid_(std::move(tid)), n_(n), tag_(tag), inner_(inner) {}

  Stmt Mutate_(const ForNode* op, const Stmt& self) override {
    const bool mine = tag_ && op->for_kind == ForKind::kThreadBinding && op->tag == *tag_;
    if (mine) around_.push_back(op);
    Stmt s = MutateFields(op, self);
    if (mine) around_.pop_back();
    return s;
  }
  Expr Mutate_(const BufferLoadNode* op, const Expr& self) override {
    if (op->buffer != old_) return MutateFields(op, self);
    return Load(new_, {Index(op->indices[0])});
  }
  Stmt Mutate_(const BufferStoreNode* op, const Stmt& self) override {
    if (op->buffer != old_) return MutateFields(op, self);
    return Store(new_, Mutate(op->value), {Index(op->indices[0])});
  }

 private:
  Expr Index(const Expr& i) {
    if (!tag_) return Add(Mul(tid_, IntImm(n_, tid_->dtype)), Cast(tid_->dtype, Mutate(i)));
    const ForNode* loop = around_.back();
    const DType t = loop->var->dtype;
    const Expr thread = IsConstInt(loop->min, 0) ? Expr(loop->var) : Sub(loop->var, Cast(t, loop->min));
    const Expr outer = tid_ ? Cast(t, tid_) : IntImm(0, t);
    return Add(Mul(Add(Mul(outer, IntImm(inner_, t)), thread), IntImm(n_, t)), Cast(t, Mutate(i)));
  }
  Buffer old_, new_;
  Expr tid_;
  int64_t n_;
  std::optional<ThreadTag> tag_;
  int64_t inner_;
  std::vector<const ForNode*> around_;
};

// A thread loop's variable counted from 0.
Expr LocalIndex(const ThreadLoop& t) { return IsConstInt(t.min, 0) ? Expr(t.var) : Sub(t.var, Cast(t.var->dtype, t.min)); }

// Statements that need every thread of the block at once: barriers and warp shuffles.
bool NeedsFission(const Stmt& s) { return ContainsBarrier(s) || ContainsShuffle(s); }

// Replaces the one shuffle in an expression by a load of the partner's value from `exchange`.
class ShuffleToLoad : public IRMutator {
 public:
  explicit ShuffleToLoad(std::function<Expr(const CallNode*)> load) : load_(std::move(load)) {}
  const CallNode* shuffle = nullptr;
  int count = 0;
  Expr Mutate_(const CallNode* op, const Expr& self) override {
    if (!IsShuffleXor(op)) return MutateFields(op, self);
    shuffle = op;
    ++count;
    return load_(op);
  }

 private:
  std::function<Expr(const CallNode*)> load_;
};

class Serializer : public IRMutator {
 public:
  std::string error;

  Stmt Mutate_(const ForNode* op, const Stmt& self) override {
    if (!error.empty()) return self;
    if (IsThreadLoop(op)) return Fission({ThreadLoop{op->var, op->min, op->extent, op->tag}}, op->body);
    if (op->for_kind != ForKind::kThreadBinding) return MutateFields(op, self);
    // blockIdx (and any leftover vthread) loops: blocks are independent, so any order is valid.
    return For(op->var, op->min, op->extent, ForKind::kSerial, Mutate(op->body), ThreadTag::kNone,
               op->auto_unroll_max_step);
  }

  // Outside threadIdx loops every thread runs the same code: there is nothing to order.
  Stmt Mutate_(const BarrierNode*, const Stmt&) override { return Seq({}); }

  // A local buffer outside the thread loops that use it (see InnerThreadAccesses): one per thread.
  Stmt Mutate_(const AllocateNode* op, const Stmt& self) override {
    const int64_t* n = op->buffer->shape.size() == 1 ? AsConstInt(op->buffer->shape[0]) : nullptr;
    if (!error.empty() || op->buffer->scope != Scope::kLocal || !n) return MutateFields(op, self);
    auto per_thread = ExpandForInnerThreads(op, {}, Expr(), 1, *n);
    if (!per_thread) return MutateFields(op, self);
    return Allocate(per_thread->first, Mutate(per_thread->second));
  }

 private:
  // `s` run by every thread of `threads` (outermost first), with barriers turned into loop fission.
  Stmt Fission(std::vector<ThreadLoop> threads, const Stmt& s) {
    if (!error.empty()) return s;
    if (!NeedsFission(s)) return Wrap(threads, Mutate(s));
    if (const auto* op = As<ForNode>(s)) {
      if (IsThreadLoop(op)) {
        threads.push_back({op->var, op->min, op->extent, op->tag});
        return Fission(std::move(threads), op->body);
      }
      if (op->for_kind == ForKind::kThreadBinding) return Fail("a block or vthread loop inside a threadIdx loop");
      if (DependsOnThread(threads, op->min) || DependsOnThread(threads, op->extent)) {
        return Fail("barrier inside a loop whose bounds depend on the thread");
      }
      // A loop around a barrier runs in lockstep on all threads: it is sequential by construction.
      ForKind kind = op->for_kind == ForKind::kUnrolled ? ForKind::kUnrolled : ForKind::kSerial;
      return For(op->var, op->min, op->extent, kind, Fission(threads, op->body), ThreadTag::kNone,
                 op->auto_unroll_max_step);
    }
    if (const auto* op = As<IfThenElseNode>(s)) {
      if (DependsOnThread(threads, op->cond)) return Fail("barrier or warp shuffle under a thread-dependent condition");
      Stmt else_case = op->else_case ? Fission(threads, op->else_case) : nullptr;
      return IfThenElse(op->cond, Fission(threads, op->then_case), else_case);
    }
    if (const auto* op = As<SeqNode>(s)) {
      std::vector<Stmt> out, group;
      auto flush = [&] {
        if (!group.empty()) out.push_back(Wrap(threads, Mutate(Seq(std::move(group)))));
        group.clear();
      };
      for (const auto& st : op->stmts) {
        if (As<BarrierNode>(st)) {
          flush();
        } else if (NeedsFission(st)) {
          flush();
          out.push_back(Fission(threads, st));
        } else {
          group.push_back(st);
        }
      }
      flush();
      return Seq(std::move(out));
    }
    if (const auto* op = As<AllocateNode>(s)) {
      if (op->buffer->scope != Scope::kLocal) {
        // Shared memory belongs to the block, not to a thread: allocate it once around the pieces.
        return Allocate(op->buffer, Fission(threads, op->body));
      }
      return ExpandLocalBuffer(threads, op);
    }
    if (As<BarrierNode>(s)) return Seq({});
    if (const auto* op = As<BufferStoreNode>(s)) return ExchangeShuffle(threads, op);
    return Fail("unexpected statement holding a barrier");
  }

  // A store whose value shuffles: every thread first writes the shuffled value to a block-wide
  // exchange array, then (after all have) reads its partner's, the partner's threadIdx.x being its
  // own XOR the offset.
  Stmt ExchangeShuffle(const std::vector<ThreadLoop>& threads, const BufferStoreNode* op) {
    int64_t count = 0;
    const Expr tid = LinearThreadId(threads, &count);
    if (!error.empty()) return Seq({});
    Expr stride_x;
    Expr x;
    for (size_t i = threads.size(); i-- > 0;) {
      if (threads[i].tag == ThreadTag::kThreadIdxX) {
        x = Cast(tid->dtype, LocalIndex(threads[i]));
        break;
      }
      const int64_t* ext = AsConstInt(threads[i].extent);
      stride_x = stride_x ? Mul(stride_x, IntImm(*ext, tid->dtype)) : IntImm(*ext, tid->dtype);
    }
    if (!x) return Fail("warp shuffle outside a threadIdx.x loop");
    if (!stride_x) stride_x = IntImm(1, tid->dtype);
    Buffer exchange;
    ShuffleToLoad to_load([&](const CallNode* c) {
      exchange = MakeBuffer(op->buffer->name + "_exchange", c->dtype, {IntImm(count)}, Scope::kShared);
      const Expr k = Cast(tid->dtype, c->args[1]);
      const Expr flip = Select(EQ(FloorMod(FloorDiv(x, k), IntImm(2, tid->dtype)), IntImm(0, tid->dtype)), k,
                               Sub(IntImm(0, tid->dtype), k));  // (x ^ k) - x for a power of two k
      return Load(exchange, {Add(tid, Mul(flip, stride_x))});
    });
    const Expr value = to_load.Mutate(op->value);
    if (to_load.count != 1 || ContainsShuffle(to_load.shuffle->args[0])) {
      return Fail("a store with more than one warp shuffle");
    }
    const Stmt give = Store(exchange, to_load.shuffle->args[0], {tid});
    const Stmt take = Store(op->buffer, value, op->indices);
    return Allocate(exchange, Seq({Wrap(threads, Mutate(give)), Wrap(threads, Mutate(take))}));
  }

  // The linear id of a thread over `threads` (outermost most significant) and their count.
  Expr LinearThreadId(const std::vector<ThreadLoop>& threads, int64_t* count) {
    Expr tid;
    *count = 1;
    for (const auto& t : threads) {
      const int64_t* ext = AsConstInt(t.extent);
      if (!ext) {
        Fail("thread extent is not constant");
        return IntImm(0);
      }
      const Expr local = LocalIndex(t);
      tid = tid ? Add(Mul(tid, IntImm(*ext, tid->dtype)), Cast(tid->dtype, local)) : local;
      *count *= *ext;
    }
    return tid;
  }

  Stmt ExpandLocalBuffer(const std::vector<ThreadLoop>& threads, const AllocateNode* op) {
    const Buffer& buf = op->buffer;
    const int64_t* n = buf->shape.size() == 1 ? AsConstInt(buf->shape[0]) : nullptr;
    if (!n) return Fail("local buffer " + buf->name + " is not flat with a constant size");
    int64_t count = 1;
    const Expr tid = LinearThreadId(threads, &count);
    if (!error.empty()) return Seq({});
    if (auto per_thread = ExpandForInnerThreads(op, threads, tid, count, *n)) {
      return Allocate(per_thread->first, Fission(threads, per_thread->second));
    }
    Buffer expanded = MakeBuffer(buf->name, buf->dtype, {IntImm(*n * count, buf->shape[0]->dtype)}, Scope::kLocal);
    Stmt body = ExpandLocal(buf, expanded, tid, *n).Mutate(op->body);
    return Allocate(expanded, Fission(threads, body));
  }

  // A local buffer allocated outside `outer` threads' loops (tid, count of them) and outside the
  // loops of one more thread tag that all its accesses are inside: one copy per thread of both.
  static std::optional<std::pair<Buffer, Stmt>> ExpandForInnerThreads(const AllocateNode* op,
                                                                      const std::vector<ThreadLoop>& outer,
                                                                      const Expr& tid, int64_t count, int64_t n) {
    InnerThreadAccesses inner(op->buffer.get(), outer);
    inner.Visit(op->body);
    if (!inner.ok || !inner.tag) return std::nullopt;
    const Buffer& buf = op->buffer;
    Buffer expanded = MakeBuffer(buf->name, buf->dtype, {IntImm(n * count * inner.extent, buf->shape[0]->dtype)}, Scope::kLocal);
    return std::make_pair(expanded, ExpandLocal(buf, expanded, tid, n, inner.tag, inner.extent).Mutate(op->body));
  }

  static Stmt Wrap(const std::vector<ThreadLoop>& threads, Stmt body) {
    for (size_t i = threads.size(); i-- > 0;) {
      body = For(threads[i].var, threads[i].min, threads[i].extent, ForKind::kSerial, std::move(body));
    }
    return body;
  }

  static bool DependsOnThread(const std::vector<ThreadLoop>& threads, const Expr& e) {
    std::unordered_set<const VarNode*> vars;
    for (const auto& t : threads) vars.insert(t.var.get());
    return IsThreadDependent(e, vars);
  }

  Stmt Fail(std::string msg) {
    if (error.empty()) error = std::move(msg);
    return Seq({});
  }
};

class ThreadFinder : public IRVisitor {
 public:
  bool found = false;
  void Visit_(const ForNode* op) override {
    found |= op->for_kind == ForKind::kThreadBinding;
    if (!found) VisitFields(op);
  }
  void Visit_(const BarrierNode*) override { found = true; }
};

}  // namespace

Result<Stmt> SerializeThreads(const Stmt& s) {
  Serializer ser;
  Stmt out = ser.Mutate(s);
  if (!ser.error.empty()) return MakeError("invalid GPU program: " + ser.error);
  return out;
}

bool NeedsThreadSerialization(const Stmt& s) {
  ThreadFinder f;
  f.Visit(s);
  return f.found;
}

}  // namespace autotune::tir
