#include "tir/lower/schedule_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "tir/analysis/int_bound.h"
#include "tir/analysis/tensor_intrinsics.h"
#include "support/check.h"
#include "tir/functor.h"
#include "tir/lower/region.h"
#include "tir/schedule/primitives/primitives.h"
#include "tir/transform/simplify.h"
#include "tir/transform/substitute.h"

namespace autotune::tir {

namespace {

// Where a stage's output lives: the buffer and, per dimension, the index its element 0 stands for.
struct Placement {
  Buffer buffer;
  std::vector<Expr> mins;
};

struct ThreadBinding {
  ThreadTag tag;
  Var var;
  int64_t extent;
};
using ThreadEnv = std::vector<ThreadBinding>;

struct Predicate {
  Expr cond;
  bool uses_reduce;
};

struct StageInfo {
  std::vector<IndexRange> dom;   // per root iter
  std::vector<int64_t> extent;   // per iter id: the loop's trip count over this stage's domain
  std::vector<Expr> value;       // per iter id: offset within the domain, in loop variables
  std::vector<bool> unified;     // per iter id: a thread leaf that reuses an enclosing loop's variable
  std::vector<Expr> root_value;  // per root iter: dom.min + value
  std::vector<Predicate> predicates;
};

// Whether a loop bound to `tag` outside the attach point is relaxed (the buffer holds the values of
// all its iterations) for a buffer in `scope`: shared memory is filled by all threads of a block,
// global memory by all blocks; local memory is per thread. (TVM's storage-rank rule.)
bool RelaxedByScope(ThreadTag tag, Scope scope) {
  if (tag == ThreadTag::kNone) return false;
  if (IsBlockTag(tag)) return scope == Scope::kGlobal;
  return scope == Scope::kGlobal || scope == Scope::kShared;  // threadIdx and vthread
}

// The index arithmetic of split and fused loops, without the identities an extent of 1 makes
// (x * 1, x / 1, x % 1, x - 0): the simplifier would remove them, once per use of the shared node.
Expr TimesExtent(const Expr& x, int64_t extent) { return extent == 1 ? x : Mul(x, IntImm(extent)); }
Expr QuotientBy(const Expr& x, int64_t extent) { return extent == 1 ? x : FloorDiv(x, IntImm(extent)); }
Expr RemainderBy(const Expr& x, int64_t extent) { return extent == 1 ? IntImm(0) : FloorMod(x, IntImm(extent)); }
Expr Offset(const Expr& index, const Expr& min) { return IsConstInt(min, 0) ? index : Sub(index, min); }

class LoadRemapper : public IRMutator {
 public:
  explicit LoadRemapper(const std::unordered_map<const BufferNode*, Placement>& placed) : placed_(placed) {}
  Expr Mutate_(const BufferLoadNode* op, const Expr& self) override {
    Expr e = MutateFields(op, self);
    const auto* load = As<BufferLoadNode>(e);
    auto it = placed_.find(load->buffer.get());
    if (it == placed_.end()) return e;
    std::vector<Expr> idx;
    for (size_t i = 0; i < load->indices.size(); ++i) idx.push_back(Offset(load->indices[i], it->second.mins[i]));
    return Load(it->second.buffer, idx);
  }

 private:
  const std::unordered_map<const BufferNode*, Placement>& placed_;
};

class ReadCollector : public IRVisitor {
 public:
  explicit ReadCollector(const BufferNode* b) : b_(b) {}
  std::vector<std::vector<Expr>> reads;
  void Visit_(const BufferLoadNode* op) override {
    if (op->buffer.get() == b_) reads.push_back(op->indices);
    VisitFields(op);
  }

 private:
  const BufferNode* b_;
};

Expr Combine(ReduceOp op, Expr acc, Expr value) {
  switch (op) {
    case ReduceOp::kSum: return Add(std::move(acc), std::move(value));
    case ReduceOp::kMax: return Max(std::move(acc), std::move(value));
    case ReduceOp::kMin: return Min(std::move(acc), std::move(value));
  }
  return nullptr;
}

Expr AllOf(const std::vector<Expr>& conds) {
  Expr out;
  for (const auto& c : conds) out = out ? And(out, c) : c;
  return out;
}

class NestBuilder {
 public:
  explicit NestBuilder(const ScheduleState& state) : state_(state) {}

  Result<PrimFunc> Run(const std::string& name) {
    std::vector<Stmt> top;
    std::vector<Buffer> root_allocs;
    for (int sid : state_.order) {
      if (state_.stages[sid].attach != AttachKind::kRoot) continue;
      Stmt s = BuildStage(sid, {});
      if (error_) return MakeError(*error_);
      top.push_back(s);
      if (!state_.stages[sid].is_output) root_allocs.push_back(placed_[state_.stages[sid].op->buffer.get()].buffer);
    }
    Stmt body = Seq(top);
    for (auto it = root_allocs.rbegin(); it != root_allocs.rend(); ++it) body = Allocate(*it, body);
    PrimFunc f;
    f.name = name;
    for (const auto& in : state_.inputs) f.params.push_back(in->buffer);
    // The outputs in stage order: side outputs, then the output (the last).
    for (int sid : state_.order) {
      if (state_.stages[sid].is_output) f.params.push_back(state_.stages[sid].op->buffer);
    }
    for (const auto& p : state_.packs) f.packs.push_back({p.input, p.source->buffer, state_.inputs[p.input]->buffer, p.layout});
    f.body = body;
    f.vector_lanes = state_.target.cpu.float_lanes;
    return f;
  }

 private:
  void Fail(std::string msg) {
    if (!error_) error_ = std::move(msg);
  }

  // ---- Bound inference ----------------------------------------------------------------------
  void InferDomain(int sid, StageInfo& info) {
    const Stage& st = state_.stages[sid];
    info.dom.assign(st.root.size(), IndexRange{});
    for (size_t r = 0; r < st.root.size(); ++r) info.dom[r] = IndexRange{IntImm(0), st.iters[st.root[r]].extent};
    if (st.attach == AttachKind::kRoot) return;
    const int host = st.attach_stage;
    const Stage& hs = state_.stages[host];
    const StageInfo& hi = infos_.at(host);
    // Loop ranges: the host's loops inside the attach loop run over their range; the loops at and
    // outside it are fixed, except thread loops that the buffer's scope relaxes.
    // A side output computed at a thread loop writes its own part at global indices: each thread's
    // region, not the union a shared global buffer would need.
    const bool relax_by_scope = st.attach == AttachKind::kAt && !st.is_output;
    std::unordered_map<const VarNode*, LoopRange> loops = loop_info_;
    for (auto& [v, r] : loops) r.relaxed = relax_by_scope && RelaxedByScope(loop_tag_[v], st.scope);
    const int pos = hs.LeafPosition(st.attach_iter);
    for (size_t p = 0; p < hs.leaves.size(); ++p) {
      const int it = hs.leaves[p];
      if (hi.unified[it]) continue;
      LoopRange lr{hs.iters[it].var, hi.extent[it], false};
      if (static_cast<int>(p) > pos) {
        lr.relaxed = true;
      } else if (relax_by_scope) {
        lr.relaxed = RelaxedByScope(hs.iters[it].tag, st.scope);
      }
      loops[lr.var.get()] = lr;
    }
    const size_t ndim = st.op->axis.size();
    std::vector<std::vector<Expr>> accesses;
    if (st.attach == AttachKind::kAt) {
      // What the host reads of this stage, and of the other readers computed alongside it (which
      // read it at their own axes), in the host's loop variables.
      std::unordered_map<const VarNode*, Expr> host_roots = RootMap(hs, hi);
      for (int reader : state_.Consumers(sid)) {
        if (reader != host && ComputedInside(state_, reader, host, st.attach_iter)) {
          for (auto& idx : ReadsThrough(sid, reader, hs, host_roots)) accesses.push_back(std::move(idx));
          // The reader's whole reduction runs inside the attach loop: its reads cover every step.
          for (const auto& r : state_.stages[reader].op->reduce_axis) loops[r.var.get()] = LoopRange{r.var, r.extent, true};
          continue;
        }
        if (reader != host && !ComputedAlongside(state_, reader, sid, host, st.attach_iter)) {
          Fail(fmt::format("{} is computed at a loop of {} but also read by {}", st.name(), hs.name(),
                           state_.stages[reader].name()));
          return;
        }
        ReadCollector rc(reader == host ? st.op->buffer.get() : state_.stages[reader].op->buffer.get());
        rc.Visit(hs.op->body);
        for (auto& idx : rc.reads) {
          for (auto& e : idx) e = Substitute(e, host_roots);
          accesses.push_back(idx);
        }
      }
    } else {
      // Elementwise consumer: the region the producer has completed in this iteration.
      std::vector<Expr> idx;
      for (size_t d = 0; d < ndim; ++d) idx.push_back(hi.root_value[d]);
      accesses.push_back(idx);
    }
    for (size_t d = 0; d < ndim; ++d) {
      const int64_t full = st.op->shape[d];
      std::optional<IndexRange> acc;
      bool whole = accesses.empty();
      for (const auto& idx : accesses) {
        IndexRange r = EvalIndexRange(idx[d], loops);
        if (!acc) {
          acc = r;
        } else if (auto u = UnionRange(*acc, r)) {
          acc = u;
        } else {
          whole = true;
        }
      }
      if (whole || !acc || acc->extent >= full) {
        info.dom[d] = IndexRange{IntImm(0), full};
      } else {
        info.dom[d] = *acc;
      }
    }
  }

  // What `reader`, computed inside the host's loops, reads of stage `sid`, in the host's loop
  // variables: its reads of the stage at the indices where the host reads `reader`.
  std::vector<std::vector<Expr>> ReadsThrough(int sid, int reader, const Stage& hs,
                                              const std::unordered_map<const VarNode*, Expr>& host_roots) {
    const Stage& rs = state_.stages[reader];
    ReadCollector of_reader(rs.op->buffer.get());
    of_reader.Visit(hs.op->body);
    ReadCollector of_stage(state_.stages[sid].op->buffer.get());
    of_stage.Visit(rs.op->body);
    std::vector<std::vector<Expr>> out;
    for (const auto& at : of_reader.reads) {
      std::unordered_map<const VarNode*, Expr> axes;
      for (size_t d = 0; d < rs.op->axis.size(); ++d) axes[rs.op->axis[d].var.get()] = Substitute(at[d], host_roots);
      for (auto idx : of_stage.reads) {
        for (auto& e : idx) e = Substitute(e, axes);
        out.push_back(std::move(idx));
      }
    }
    return out;
  }

  // ---- Loop variables and predicates --------------------------------------------------------
  void ComputeValues(int sid, const ThreadEnv& env, StageInfo& info) {
    const Stage& st = state_.stages[sid];
    // Trip counts follow from the inferred domain: the recorded extents are those of the whole
    // tensor, but a stage computed inside another's loop covers just the region it needs.
    info.extent.assign(st.iters.size(), 0);
    for (size_t r = 0; r < st.root.size(); ++r) info.extent[st.root[r]] = info.dom[r].extent;
    for (const auto& rel : st.relations) {
      if (rel.kind == Relation::Kind::kSplit) {
        const int64_t factor = st.iters[rel.inner].extent;
        info.extent[rel.inner] = factor;
        info.extent[rel.outer] = (info.extent[rel.parent] + factor - 1) / factor;
      } else {
        info.extent[rel.parent] = info.extent[rel.outer] * info.extent[rel.inner];
      }
    }
    info.value.assign(st.iters.size(), nullptr);
    info.unified.assign(st.iters.size(), false);
    for (int leaf : st.leaves) {
      const Iter& it = st.iters[leaf];
      const int64_t extent = info.extent[leaf];
      info.value[leaf] = it.var;
      if (it.kind != ForKind::kThreadBinding) continue;
      for (const auto& b : env) {
        if (b.tag != it.tag) continue;
        if (extent > b.extent) {
          Fail(fmt::format("stage {} binds {} to {} with extent {}, more than the {} of the enclosing loop", st.name(),
                           it.name, ThreadTagName(it.tag), extent, b.extent));
        } else if (extent < b.extent) {
          info.predicates.push_back({LT(b.var, IntImm(extent)), it.is_reduce});
        }
        info.value[leaf] = b.var;
        info.unified[leaf] = true;
      }
    }
    std::vector<bool> reduce_iter(st.iters.size());
    for (size_t i = 0; i < st.iters.size(); ++i) reduce_iter[i] = st.iters[i].is_reduce;
    for (auto r = st.relations.rbegin(); r != st.relations.rend(); ++r) {
      const int64_t inner_extent = info.extent[r->inner];
      if (r->kind == Relation::Kind::kSplit) {
        info.value[r->parent] = Add(TimesExtent(info.value[r->outer], inner_extent), info.value[r->inner]);
        const int64_t parent_extent = info.extent[r->parent];
        if (info.extent[r->outer] * inner_extent > parent_extent) {
          info.predicates.push_back({LT(info.value[r->parent], IntImm(parent_extent)), reduce_iter[r->parent]});
        }
      } else {
        info.value[r->outer] = QuotientBy(info.value[r->parent], inner_extent);
        info.value[r->inner] = RemainderBy(info.value[r->parent], inner_extent);
      }
    }
    info.root_value.clear();
    for (size_t r = 0; r < st.root.size(); ++r) {
      info.root_value.push_back(Simplify(Add(info.dom[r].min, info.value[st.root[r]])));
    }
    if (st.attach != AttachKind::kRoot) {
      // A region computed for a partial tile can reach past the edge of the tensor. Guards that
      // the loop ranges already prove are left out: the simplifier would drop them, at a cost.
      BoundAnalyzer loops = LoopBounds(st, env, info);
      for (size_t d = 0; d < st.op->axis.size(); ++d) {
        if (info.dom[d].extent == st.op->shape[d] && IsConstInt(info.dom[d].min, 0)) continue;
        const IntBound b = loops.Bound(info.root_value[d]);
        if (b.min < 0) info.predicates.push_back({GE(info.root_value[d], IntImm(0)), false});
        if (b.max >= st.op->shape[d]) info.predicates.push_back({LT(info.root_value[d], IntImm(st.op->shape[d])), false});
      }
    }
  }

  // The ranges of the loops around a stage's statements: those emitted so far, the stage's thread
  // bindings and its own loops.
  BoundAnalyzer LoopBounds(const Stage& st, const ThreadEnv& env, const StageInfo& info) const {
    BoundAnalyzer an;
    for (const auto& [v, r] : loop_info_) an.Bind(r.var, 0, r.extent);
    for (const auto& b : env) an.Bind(b.var, 0, b.extent);
    for (int leaf : st.leaves) {
      if (!info.unified[leaf]) an.Bind(st.iters[leaf].var, 0, info.extent[leaf]);
    }
    return an;
  }

  std::unordered_map<const VarNode*, Expr> RootMap(const Stage& st, const StageInfo& info) {
    std::unordered_map<const VarNode*, Expr> map;
    const size_t ndim = st.op->axis.size();
    for (size_t d = 0; d < ndim; ++d) map[st.op->axis[d].var.get()] = info.root_value[d];
    for (size_t r = 0; r < st.op->reduce_axis.size(); ++r) map[st.op->reduce_axis[r].var.get()] = info.root_value[ndim + r];
    return map;
  }

  // Strides with the dimensions laid out in `order` (outermost first; empty: as declared), each
  // aligned dimension's stride padded (storage_align names dimensions as declared).
  static std::vector<Expr> LaidOutStrides(const std::vector<int64_t>& extents, std::vector<int64_t> order,
                                          const std::vector<StorageAlignment>& aligns) {
    if (order.empty()) {
      for (size_t d = 0; d < extents.size(); ++d) order.push_back(static_cast<int64_t>(d));
    }
    std::vector<Expr> strides(extents.size());
    int64_t stride = 1;
    for (size_t i = order.size(); i-- > 0;) {
      for (const auto& a : aligns) {
        if (a.dim == order[i] && i + 1 < order.size()) stride = AlignedStride(stride, a.factor, a.offset);
      }
      strides[order[i]] = IntImm(stride);
      stride *= extents[order[i]];
    }
    return strides;
  }

  void Place(int sid, const StageInfo& info) {
    const Stage& st = state_.stages[sid];
    if (st.is_output) return;
    std::vector<int64_t> extents;
    std::vector<Expr> shape, mins;
    for (size_t d = 0; d < st.op->axis.size(); ++d) {
      extents.push_back(info.dom[d].extent);
      shape.push_back(IntImm(info.dom[d].extent));
      mins.push_back(info.dom[d].min);
    }
    std::vector<Expr> strides;
    if (!st.storage_order.empty() || !st.aligns.empty()) strides = LaidOutStrides(extents, st.storage_order, st.aligns);
    Buffer buffer = MakeBuffer(st.name(), st.op->dtype, shape, st.scope, strides);
    if (st.pipeline_stages > 1) {
      auto flagged = std::make_shared<BufferNode>(*buffer);
      flagged->pipeline_stages = st.pipeline_stages;
      buffer = flagged;
    }
    placed_[st.op->buffer.get()] = Placement{buffer, mins};
  }

  // ---- Nest construction -------------------------------------------------------------------
  // A reduction whose loop is bound to threads: the register that accumulates each thread's share,
  // the combiner, and where the result goes.
  struct CrossThread {
    Buffer partial;
    ReduceOp combiner;
    Buffer out;
    std::vector<Expr> out_idx;
  };

  Stmt BuildStage(int sid, ThreadEnv env) {
    const Stage& st = state_.stages[sid];
    StageInfo& info = infos_[sid];
    InferDomain(sid, info);
    ComputeValues(sid, env, info);
    Place(sid, info);
    if (error_) return Seq({});

    // The statements of the stage, in loop variables.
    auto roots = RootMap(st, info);
    const Buffer out_buf = st.is_output ? st.op->buffer : placed_[st.op->buffer.get()].buffer;
    std::vector<Expr> out_idx;
    for (size_t d = 0; d < st.op->axis.size(); ++d) out_idx.push_back(info.value[st.root[d]]);
    if (st.is_output) out_idx = std::vector<Expr>(info.root_value.begin(), info.root_value.begin() + st.op->axis.size());
    const auto* reduce = As<ReduceNode>(st.op->body);
    Pending pend{sid, nullptr, nullptr, std::nullopt};
    if (reduce && ThreadReduceLeaf(st) >= 0) {
      // Each thread accumulates its share in a register; EmitCrossThread combines the shares.
      CrossThread x{MakeBuffer(st.name() + "_partial", reduce->dtype, {IntImm(1)}, Scope::kLocal), reduce->combiner,
                    out_buf, out_idx};
      const std::vector<Expr> zero = {IntImm(0)};
      pend.update = Store(x.partial, Combine(reduce->combiner, Load(x.partial, zero), Substitute(reduce->source, roots)), zero);
      pend.cross = x;
    } else if (reduce) {
      Expr src = Substitute(reduce->source, roots);
      pend.update = Store(out_buf, Combine(reduce->combiner, Load(out_buf, out_idx), src), out_idx);
      pend.init = Store(out_buf, ReduceIdentity(reduce->combiner, reduce->dtype), out_idx);
    } else {
      pend.update = Store(out_buf, Substitute(st.op->body, roots), out_idx);
    }
    pending_.push_back(pend);
    Stmt s = Emit(sid, 0, env);
    pending_.pop_back();
    return s;
  }

  // Loops from leaf position `pos` inward.
  Stmt Emit(int sid, size_t pos, ThreadEnv env) {
    const Stage& st = state_.stages[sid];
    const StageInfo& info = infos_.at(sid);
    const Pending& pend = pending_.back();
    if (pos == st.leaves.size()) return Guard(RemapLoads(pend.update), info, true);
    if (pend.cross && pos == FirstReducePosition(st)) return EmitCrossThread(sid, pos, env);
    Stmt init_nest;
    if (pend.init && pos == FirstReducePosition(st)) init_nest = InitNest(sid, pos);
    const int iter = st.leaves[pos];
    const Iter& it = st.iters[iter];
    const int64_t extent = info.extent[iter];
    if (!info.unified[iter]) {
      loop_info_[it.var.get()] = LoopRange{it.var, extent, false};
      loop_tag_[it.var.get()] = it.tag;
      if (it.kind == ForKind::kThreadBinding) env.push_back({it.tag, it.var, extent});
    }
    // Stages computed in this loop: producers before the body, elementwise consumers after it.
    std::vector<Stmt> pre, post;
    std::vector<Buffer> allocs;
    for (int other : state_.order) {
      const Stage& o = state_.stages[other];
      if (o.attach_stage != sid || o.attach_iter != iter) continue;
      if (o.attach == AttachKind::kAt) {
        pre.push_back(BuildStage(other, env));
      } else if (o.attach == AttachKind::kReverseAt) {
        continue;  // built after the body, below
      } else {
        continue;
      }
      if (!o.is_output) allocs.push_back(placed_[o.op->buffer.get()].buffer);
    }
    Stmt inner = Emit(sid, pos + 1, env);
    for (int other : state_.order) {
      const Stage& o = state_.stages[other];
      if (o.attach_stage != sid || o.attach_iter != iter || o.attach != AttachKind::kReverseAt) continue;
      post.push_back(BuildStage(other, env));
      if (!o.is_output) allocs.push_back(placed_[o.op->buffer.get()].buffer);
    }
    std::vector<Stmt> parts = pre;
    parts.push_back(inner);
    parts.insert(parts.end(), post.begin(), post.end());
    Stmt body = Seq(parts);
    for (auto a = allocs.rbegin(); a != allocs.rend(); ++a) body = Allocate(*a, body);
    if (!info.unified[iter]) {
      body = For(it.var, IntImm(0), IntImm(extent), it.kind, body, it.tag, it.auto_unroll_max_step);
    }
    if (!it.tensorize.empty()) body = TensorizeTile(st, it.tensorize, body);
    if (init_nest) body = Seq({init_nest, body});
    return body;
  }

  static size_t FirstReducePosition(const Stage& st) {
    for (size_t p = 0; p < st.leaves.size(); ++p) {
      if (st.iters[st.leaves[p]].is_reduce) return p;
    }
    return st.leaves.size();
  }

  // The position of the stage's reduction loop bound to a thread index, or -1.
  static int ThreadReduceLeaf(const Stage& st) {
    for (size_t p = 0; p < st.leaves.size(); ++p) {
      const Iter& it = st.iters[st.leaves[p]];
      if (it.is_reduce && it.kind == ForKind::kThreadBinding && IsThreadTag(it.tag)) return static_cast<int>(p);
    }
    return -1;
  }

  // A reduction whose loop at leaf position `tl` is bound to T threads (TVM's cross-thread
  // allreduce): every thread accumulates its share of the reduction loops from `pos` inward in a
  // register, writes it to shared memory, and a tree of T/2, T/4, ... 1 threads between barriers
  // combines the shares. Every thread then stores the result; a last barrier lets an enclosing loop
  // refill the shared array. Each row of the enclosing threads (threadIdx.y, ...) has its own slots.
  Stmt EmitCrossThread(int sid, size_t pos, const ThreadEnv& env) {
    const Stage& st = state_.stages[sid];
    const StageInfo& info = infos_.at(sid);
    const CrossThread& x = *pending_.back().cross;
    const int tl = ThreadReduceLeaf(st);
    const Iter& t_it = st.iters[st.leaves[tl]];
    const int64_t threads = info.extent[st.leaves[tl]];
    for (size_t p = pos; p < st.leaves.size(); ++p) {
      if (!st.iters[st.leaves[p]].is_reduce) {
        Fail(fmt::format("stage {} reduces across threads, so its spatial loops must all be outside its reduction loops",
                         st.name()));
      }
      for (int other : state_.order) {
        if (state_.stages[other].attach_stage == sid && state_.stages[other].attach_iter == st.leaves[p]) {
          Fail(fmt::format("stage {} is computed inside the cross-thread reduction of {}", state_.stages[other].name(),
                           st.name()));
        }
      }
    }
    Expr slot_base = IntImm(0);
    int64_t rows = 1;
    for (const auto& b : env) {
      if (b.tag == t_it.tag && b.extent != threads) {
        Fail(fmt::format("stage {} reduces over {} threads of {}, but the enclosing loop has {}", st.name(), threads,
                         ThreadTagName(b.tag), b.extent));
      }
      if (!IsThreadTag(b.tag) || b.tag == t_it.tag) continue;
      slot_base = Add(Mul(slot_base, IntImm(b.extent)), b.var);
      rows *= b.extent;
    }
    if (error_) return Seq({});
    const bool unified = info.unified[st.leaves[tl]];
    const Expr tid = info.value[st.leaves[tl]];
    auto in_threads = [&](Stmt s) {
      return unified ? s : For(t_it.var, IntImm(0), IntImm(threads), ForKind::kThreadBinding, s, t_it.tag);
    };
    const std::vector<Expr> zero = {IntImm(0)};

    Stmt accumulate = Guard(RemapLoads(pending_.back().update), info, true);
    for (size_t p = st.leaves.size(); p-- > pos;) {
      if (static_cast<int>(p) == tl) continue;
      const Iter& it = st.iters[st.leaves[p]];
      accumulate = For(it.var, IntImm(0), IntImm(info.extent[st.leaves[p]]), it.kind, accumulate, ThreadTag::kNone,
                       it.auto_unroll_max_step);
    }
    accumulate = Seq({Store(x.partial, ReduceIdentity(x.combiner, x.partial->dtype), zero), accumulate});
    if (UsesWarpShuffles(t_it.tag, threads)) {
      return WarpReduce(x, info, threads, tid, slot_base, rows, accumulate, in_threads);
    }
    const Buffer shares = MakeBuffer(st.name() + "_shares", x.partial->dtype, {IntImm(rows * threads)}, Scope::kShared);
    auto share = [&](const Expr& lane) { return std::vector<Expr>{Simplify(Add(Mul(slot_base, IntImm(threads)), lane))}; };
    std::vector<Stmt> steps;
    steps.push_back(in_threads(Allocate(x.partial, Seq({accumulate, Store(shares, Load(x.partial, zero), share(tid))}))));
    steps.push_back(Barrier());
    int64_t span = 1;
    while (span < threads) span *= 2;
    for (int64_t half = span / 2; half >= 1; half /= 2) {
      Expr active = LT(tid, IntImm(half));
      if (span != threads) active = And(active, LT(Add(tid, IntImm(half)), IntImm(threads)));
      Expr combined = Combine(x.combiner, Load(shares, share(tid)), Load(shares, share(Add(tid, IntImm(half)))));
      steps.push_back(in_threads(IfThenElse(active, Store(shares, combined, share(tid)))));
      steps.push_back(Barrier());
    }
    steps.push_back(Guard(Store(x.out, Load(shares, share(IntImm(0))), x.out_idx), info, false));
    steps.push_back(Barrier());
    return Allocate(shares, Seq(steps));
  }

  // Shuffles serve when a row's threads on threadIdx.x are whole warps or an aligned part of one.
  static bool UsesWarpShuffles(ThreadTag tag, int64_t threads) {
    if (tag != ThreadTag::kThreadIdxX || threads < 2 || threads > 1024) return false;  // 1024: one lane per warp
    return threads % 32 == 0 || (threads < 32 && (threads & (threads - 1)) == 0);
  }

  // Combines `partial` across each aligned group of `width` lanes: afterwards every lane of a group
  // holds the group's total.
  static Stmt Butterfly(const CrossThread& x, int64_t width) {
    const std::vector<Expr> zero = {IntImm(0)};
    std::vector<Stmt> steps;
    for (int64_t offset = width / 2; offset >= 1; offset /= 2) {
      const Expr mine = Load(x.partial, zero);
      steps.push_back(Store(x.partial, Combine(x.combiner, mine, ShuffleXor(mine, offset)), zero));
    }
    return Seq(steps);
  }

  // The cross-thread reduction with warp shuffles (TVM's warp allreduce): up to 32 threads need no
  // shared memory and no barrier; more threads shuffle within each warp, put one share per warp in
  // shared memory and, after one barrier, every warp combines those shares with shuffles again.
  Stmt WarpReduce(const CrossThread& x, const StageInfo& info, int64_t threads, const Expr& tid,
                  const Expr& slot_base, int64_t rows, const Stmt& accumulate,
                  const std::function<Stmt(Stmt)>& in_threads) {
    const std::vector<Expr> zero = {IntImm(0)};
    const Stmt store_out = Guard(Store(x.out, Load(x.partial, zero), x.out_idx), info, false);
    if (threads <= 32) {
      Stmt s = in_threads(Allocate(x.partial, Seq({accumulate, Butterfly(x, threads), store_out})));
      return x.out->scope == Scope::kLocal ? s : Seq({s, Barrier()});
    }
    const int64_t warps = threads / 32;
    const Buffer shares = MakeBuffer(state_.stages[pending_.back().sid].name() + "_shares", x.partial->dtype,
                                     {IntImm(rows * warps)}, Scope::kShared);
    const Expr lane = FloorMod(tid, IntImm(32));
    auto share = [&](const Expr& warp) { return std::vector<Expr>{Simplify(Add(Mul(slot_base, IntImm(warps)), warp))}; };
    const Stmt give = IfThenElse(EQ(lane, IntImm(0)), Store(shares, Load(x.partial, zero), share(FloorDiv(tid, IntImm(32)))));
    const Expr gathered = Select(LT(lane, IntImm(warps)), Load(shares, share(Min(lane, IntImm(warps - 1)))),
                                 ReduceIdentity(x.combiner, x.partial->dtype));
    return Allocate(shares, Seq({in_threads(Allocate(x.partial, Seq({accumulate, Butterfly(x, 32), give}))), Barrier(),
                                 in_threads(Allocate(x.partial, Seq({Store(x.partial, gathered, zero), Butterfly(x, 32),
                                                                     store_out}))),
                                 Barrier()}));
  }

  // The initialization of a reduction: the spatial loops from `pos` inward around the init store.
  Stmt InitNest(int sid, size_t pos) {
    const Stage& st = state_.stages[sid];
    const StageInfo& info = infos_.at(sid);
    Stmt body = Guard(pending_.back().init, info, false);
    for (size_t p = st.leaves.size(); p-- > pos;) {
      const int iter = st.leaves[p];
      const Iter& it = st.iters[iter];
      if (it.is_reduce || info.unified[iter]) continue;
      ForKind kind = it.kind == ForKind::kParallel || it.kind == ForKind::kVectorized || it.kind == ForKind::kUnrolled
                         ? it.kind
                         : (it.kind == ForKind::kThreadBinding ? ForKind::kThreadBinding : ForKind::kSerial);
      body = For(it.var, IntImm(0), IntImm(info.extent[iter]), kind, body, it.tag);
      if (it.tensorize.empty()) continue;
      const TensorIntrinsic* in = FindTensorIntrinsic(it.tensorize);
      if (!in || in->init.empty()) {
        Fail(fmt::format("stage {}: the init of its reduction is inside the tile of {}, which has no init", st.name(),
                         it.tensorize));
        return body;
      }
      body = TensorizeTile(st, in->init, body);
    }
    return body;
  }

  // The tile `nest` as a call of `intrinsic`, once it matches the intrinsic's description.
  Stmt TensorizeTile(const Stage& st, const std::string& intrinsic, const Stmt& nest) {
    Stmt t = Tensorize(intrinsic, nest);
    if (auto match = CheckTensorIntrinsic(*As<TensorizeNode>(t)); !match) {
      Fail(fmt::format("stage {} does not match tensor intrinsic {}: {}", st.name(), intrinsic, match.error().message));
    }
    return t;
  }

  Stmt Guard(const Stmt& s, const StageInfo& info, bool with_reduce) {
    std::vector<Expr> conds;
    for (const auto& p : info.predicates) {
      if (with_reduce || !p.uses_reduce) conds.push_back(p.cond);
    }
    return conds.empty() ? s : IfThenElse(AllOf(conds), s);
  }

  Stmt RemapLoads(const Stmt& s) {
    LoadRemapper r(placed_);
    return r.Mutate(s);
  }

  struct Pending {
    int sid;
    Stmt update, init;
    std::optional<CrossThread> cross;
  };

  const ScheduleState& state_;
  std::unordered_map<int, StageInfo> infos_;
  std::unordered_map<const BufferNode*, Placement> placed_;
  std::unordered_map<const VarNode*, LoopRange> loop_info_;
  std::unordered_map<const VarNode*, ThreadTag> loop_tag_;
  std::vector<Pending> pending_;
  std::optional<std::string> error_;
};

}  // namespace

Result<PrimFunc> ScheduleOps(const ScheduleState& state, const std::string& name) {
  NestBuilder b(state);
  return b.Run(name);
}

}  // namespace autotune::tir
