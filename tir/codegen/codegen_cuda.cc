#include "tir/codegen/codegen_cuda.h"

#include "tir/analysis/disjoint_iterations.h"
#include "tir/analysis/expr_uses.h"
#include "tir/analysis/packed_copy.h"
#include "tir/analysis/tensor_intrinsics.h"
#include "tir/analysis/thread_dependence.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tir/codegen/c_family.h"
#include "tir/codegen/cuda_kernels.h"
#include "tir/functor.h"
#include "tir/structural_equal.h"
#include "tir/transform/linear_form.h"
#include "tir/transform/simplify.h"
#include "tir/transform/substitute.h"

namespace autotune::tir {
namespace {

// Thread tags as indices 0..5: blockIdx.x/y/z, threadIdx.x/y/z.
int TagIndex(ThreadTag t) { return static_cast<int>(t) - static_cast<int>(ThreadTag::kBlockIdxX); }
const char* const kBuiltin[6] = {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};

class ThreadLoopFinder : public IRVisitor {
 public:
  bool found = false;
  void Visit_(const ForNode* op) override {
    if (op->for_kind == ForKind::kThreadBinding) found = true;
    if (!found) VisitFields(op);
  }
  void Visit_(const BufferStoreNode*) override {}  // no loops below a store
};

bool HasThreadLoop(const Stmt& s) {
  ThreadLoopFinder f;
  f.Visit(s);
  return f.found;
}

// Shared- and global-memory buffers a statement reads and writes (local arrays are per thread).
struct Accesses {
  std::unordered_set<const BufferNode*> reads, writes;

  bool Conflicts(const Accesses& o) const {
    for (const auto* b : writes) {
      if (o.reads.count(b) || o.writes.count(b)) return true;
    }
    for (const auto* b : o.writes) {
      if (reads.count(b)) return true;
    }
    return false;
  }
  void Merge(const Accesses& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
  bool Empty() const { return reads.empty() && writes.empty(); }
  // A buffer both read and written (a write-only buffer cannot hand data between threads).
  bool ReadsWhatItWrites() const {
    for (const auto* b : writes) {
      if (reads.count(b)) return true;
    }
    return false;
  }
};

class AccessCollector : public IRVisitor {
 public:
  explicit AccessCollector(bool into_tiles = true) : into_tiles_(into_tiles) {}
  Accesses acc;
  void Visit_(const TensorizeNode* op) override {
    if (into_tiles_) VisitFields(op);
  }
  void Visit_(const BufferLoadNode* op) override {
    if (op->buffer->scope != Scope::kLocal) acc.reads.insert(op->buffer.get());
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    if (op->buffer->scope != Scope::kLocal) acc.writes.insert(op->buffer.get());
    VisitFields(op);
  }

 private:
  bool into_tiles_;
};

Accesses CollectAccesses(const Stmt& s, bool into_tiles = true) {
  AccessCollector c(into_tiles);
  c.Visit(s);
  return c.acc;
}

// The accesses barriers must order: pipelined copies (async_fill) are left out, the pipeline pass
// placed every barrier they need (tir/lower/pipeline_copies.h).
Accesses SyncedAccesses(const Stmt& s, bool into_tiles = true) {
  Accesses a = CollectAccesses(s, into_tiles);
  for (auto* set : {&a.reads, &a.writes}) std::erase_if(*set, [](const BufferNode* b) { return b->async_fill; });
  return a;
}

class StoredBuffers : public IRVisitor {
 public:
  std::unordered_set<const BufferNode*> stored;
  void Visit_(const BufferStoreNode* op) override { stored.insert(op->buffer.get()); }
};

// The loads of an expression; `unconditional` are those evaluated whatever the values: the emitted
// code evaluates a select's branches and the right operand of && and || only when taken, and a load
// there may be out of bounds when not taken (the padding of a convolution), so it must not be hoisted.
class LoadCollector : public IRVisitor {
 public:
  std::vector<const BufferLoadNode*> loads, unconditional;
  void Visit_(const BufferLoadNode* op) override {
    loads.push_back(op);
    if (conditional_ == 0) unconditional.push_back(op);
    VisitFields(op);
  }
  void Visit_(const SelectNode* op) override {
    Visit(op->cond);
    ++conditional_;
    Visit(op->true_value);
    Visit(op->false_value);
    --conditional_;
  }
  void Visit_(const BinaryNode* op) override {
    if (!IsLogical(op->op)) return VisitFields(op);
    Visit(op->a);
    ++conditional_;
    Visit(op->b);
    --conditional_;
  }

 private:
  int conditional_ = 0;
};

class LoadReplacer : public IRMutator {
 public:
  explicit LoadReplacer(const std::unordered_map<const BufferLoadNode*, Expr>& map) : map_(map) {}
  Expr Mutate_(const BufferLoadNode* op, const Expr& self) override {
    auto it = map_.find(op);
    return it != map_.end() ? it->second : MutateFields(op, self);
  }

 private:
  const std::unordered_map<const BufferLoadNode*, Expr>& map_;
};

// A vectorized loop that qualifies for float2/float4 accesses (see codegen_cuda.h): its one float32
// store at `base + v`, maybe under a guard that is the same for every lane, and the loads of the
// stored value that become vector loads.
struct VectorizedStore {
  // Loads of one buffer at one index, which one vector load serves.
  struct VectorLoad {
    Buffer buffer;
    Expr index;
    std::vector<const BufferLoadNode*> nodes;
  };
  int64_t width = 0;                      // 2 or 4
  const VarNode* lane_var = nullptr;      // the loop variable
  const IfThenElseNode* guard = nullptr;  // goes around the vector access (a cooperative fetch's bound)
  const BufferStoreNode* store = nullptr;
  bool vector_store = false;  // one vector store, else one store per lane
  bool plain_copy = false;    // the stored value is its one vector load, as it is
  std::vector<VectorLoad> loads;
};

// The loads of the stored value that qualify for vector loads, into `vs.loads`; false when the loop
// cannot be vectorized at all.
bool CollectVectorLoads(VectorizedStore& vs) {
  const BufferStoreNode* st = vs.store;
  LoadCollector loads;
  loads.Visit(st->value);
  const std::unordered_set<const BufferLoadNode*> hoistable(loads.unconditional.begin(), loads.unconditional.end());
  for (const BufferLoadNode* l : loads.loads) {
    if (l->indices.size() != 1) return false;
    // All lanes load before any lane stores: only the lane's own element of the stored buffer may be read.
    if (l->buffer == st->buffer && !ExprDeepEqual(l->indices[0], st->indices[0])) return false;
    if (l->buffer->scope == Scope::kLocal || l->buffer->dtype != DType::kFloat32 || !hoistable.count(l) ||
        !AlignedUnitStride(l->indices[0], vs.lane_var, vs.width)) {
      continue;
    }
    auto same = std::find_if(vs.loads.begin(), vs.loads.end(), [&](const VectorizedStore::VectorLoad& vl) {
      return vl.buffer == l->buffer && ExprDeepEqual(vl.index, l->indices[0]);
    });
    if (same != vs.loads.end()) {
      same->nodes.push_back(l);
    } else {
      vs.loads.push_back({l->buffer, l->indices[0], {l}});
    }
  }
  return true;
}

// The loop's vector accesses; nullopt when it does not qualify (it is then a scalar loop).
std::optional<VectorizedStore> MatchVectorizedStore(const ForNode* op) {
  const int64_t* n = AsConstInt(op->extent);
  if (!n || (*n != 2 && *n != 4) || !IsConstInt(op->min, 0)) return std::nullopt;
  VectorizedStore vs;
  vs.width = *n;
  vs.lane_var = op->var.get();
  vs.guard = As<IfThenElseNode>(op->body);
  const IfThenElseNode* guard = vs.guard;
  if (guard && ((guard->else_case && !IsEmptyStmt(guard->else_case)) || UsesVar(guard->cond, vs.lane_var))) {
    return std::nullopt;
  }
  vs.store = As<BufferStoreNode>(guard ? guard->then_case : op->body);
  const BufferStoreNode* st = vs.store;
  if (!st || st->buffer->dtype != DType::kFloat32 || st->indices.size() != 1) return std::nullopt;
  if (!UnitStride(st->indices[0], vs.lane_var)) return std::nullopt;  // every lane stores its own element
  vs.vector_store = st->buffer->scope != Scope::kLocal && AlignedUnitStride(st->indices[0], vs.lane_var, vs.width);
  if (!CollectVectorLoads(vs)) return std::nullopt;
  if (!vs.vector_store && vs.loads.empty()) return std::nullopt;
  const auto* copied = As<BufferLoadNode>(st->value);
  vs.plain_copy = copied && vs.loads.size() == 1 && vs.loads[0].nodes.size() == 1 && vs.loads[0].nodes[0] == copied;
  return vs;
}

class CudaEmitter : public CFamilyPrinter {
 public:
  CudaEmitter() : CFamilyPrinter(CLanguage::kCuda) {}

  Result<CudaModule> Run(const PrimFunc& f) {
    auto plan = PlanCudaModule(f);
    if (!plan) return plan.error();
    if (plan->kernels.empty()) return MakeError("the function computes nothing");
    CudaModule out;
    out.num_params = static_cast<int>(f.params.size());
    out.workspace_bytes = plan->workspace_bytes;
    std::vector<std::string> entries;
    for (size_t i = 0; i < plan->kernels.size(); ++i) {
      entries.push_back(Reserve(plan->kernels.size() == 1 ? f.name : fmt::format("{}_k{}", f.name, i)));
    }
    args_ = f.params;
    args_.insert(args_.end(), plan->workspaces.begin(), plan->workspaces.end());
    for (const auto& a : args_) {
      if (a->shape.size() != 1) return MakeError("buffer " + a->name + " is not flattened");
      buf_names_[a.get()] = Reserve(a->name);
    }
    std::vector<std::string> texts;
    for (size_t i = 0; i < plan->kernels.size(); ++i) {
      const CudaKernelPlan& k = plan->kernels[i];
      texts.push_back(EmitKernel(k, entries[i]));
      CudaKernelLaunch launch;
      launch.entry = entries[i];
      launch.grid = k.grid;
      launch.block = k.block;
      launch.dynamic_shared_bytes = k.DynamicShared() ? k.shared_bytes : 0;
      out.kernels.push_back(launch);
    }
    if (!error().empty()) return MakeError(error());

    std::ostringstream os;
    os << "// Generated by autotune (CUDA backend). Kernels:";
    for (const auto& e : entries) os << " " << e;
    os << ".\n\n";
    os << HelperDefinitions();
    if (UsesHelpers()) os << "\n";
    for (size_t i = 0; i < texts.size(); ++i) os << (i ? "\n" : "") << texts[i];
    out.code = os.str();
    return out;
  }

 private:
  // ---- kernels -----------------------------------------------------------------------------------
  std::string EmitKernel(const CudaKernelPlan& k, const std::string& entry) {
    StoredBuffers stored;
    stored.Visit(k.body);
    std::vector<std::string> params;
    for (const auto& a : args_) {
      params.push_back(fmt::format("{}{}* __restrict__ {}", stored.stored.count(a.get()) ? "" : "const ",
                                   TypeName(a->dtype), buf_names_[a.get()]));
    }
    body_.str("");
    indent_ = 1;
    if (k.DynamicShared()) Line("extern __shared__ __align__(16) unsigned char at_shared[];");
    for (size_t i = 0; i < k.shared.size(); ++i) {
      const Buffer& b = k.shared[i];
      const std::string name = Reserve(b->name);
      buf_names_[b.get()] = name;
      const int64_t n = *AsConstInt(b->shape[0]);
      if (k.DynamicShared()) {
        Line(fmt::format("{0}* {1} = reinterpret_cast<{0}*>(at_shared + {2});  // {3} elements", TypeName(b->dtype),
                         name, k.shared_offsets[i], n));
      } else {
        Line(fmt::format("__shared__ __align__(16) {} {}[{}];", TypeName(b->dtype), name, n));
      }
    }
    kernel_ = &k;
    FindFragments(k.body);
    bound_.fill(false);
    thread_vars_.clear();
    divergent_ = 0;
    single_thread_ = false;
    EmitStmt(k.body, true);
    kernel_ = nullptr;
    for (const auto& b : k.shared) buf_names_.erase(b.get());

    std::string text = fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}(", k.ThreadsPerBlock(), entry);
    for (size_t i = 0; i < params.size(); ++i) text += (i ? ", " : "") + params[i];
    return text + ") {\n" + body_.str() + "}\n";
  }

  // Some thread axis of dimension > 1 has no enclosing loop here: code here is block-level.
  bool AtBlockLevel() const {
    for (int a = 0; a < 3; ++a) {
      if (kernel_->block[a] > 1 && !bound_[3 + a]) return true;
    }
    return false;
  }
  bool OutsideSomeBlockLoop() const {
    for (int a = 0; a < 3; ++a) {
      if (kernel_->grid[a] > 1 && !bound_[a]) return true;
    }
    return false;
  }

  // Whether an expression can differ between the threads of a block.
  bool ThreadDependent(const Expr& e) const { return IsThreadDependent(e, thread_vars_); }

  // ---- statements --------------------------------------------------------------------------------
  void Line(const std::string& s) { body_ << std::string(2 * indent_, ' ') << s << '\n'; }

  // `tail`: nothing follows `s` in the current C scope (so it may declare names there).
  void EmitStmt(const Stmt& s, bool tail) {
    if (IsEmptyStmt(s)) return;
    const bool work = s->kind == StmtKind::kFor || s->kind == StmtKind::kBufferStore || s->kind == StmtKind::kIfThenElse;
    // (The cheap tests first: inside the thread and block loops of a kernel nothing is traversed.)
    if (work && !single_thread_ && !warp_collective_ && (AtBlockLevel() || OutsideSomeBlockLoop()) && !HasThreadLoop(s)) {
      // A tensorized tile is warp-collective: every lane of every warp runs it.
      if (!CollectAccesses(s).writes.empty() && !HasTensorizedTiles(s)) {
        if (OutsideSomeBlockLoop()) {
          Fail("a statement outside the blockIdx loops of a multi-block kernel writes memory");
          return;
        }
        if (AtBlockLevel()) return EmitSingleThread(s);
      }
    }
    switch (s->kind) {
      case StmtKind::kFor: {
        const auto* op = As<ForNode>(s);
        if (op->for_kind == ForKind::kThreadBinding) return EmitThreadLoop(op, tail);
        return EmitLoop(op, tail);
      }
      case StmtKind::kBufferStore: {
        const auto* op = As<BufferStoreNode>(s);
        if (const auto* src = AsyncCopySource(op)) {
          Line(fmt::format("at_cp_async_4(&{}, &{});", EmitIndexed(op->buffer, op->indices).text,
                           EmitIndexed(src->buffer, src->indices).text));
          Use(CHelper::kCpAsync4);
          return;
        }
        if (const auto* sel = ZeroFilledCopy(op)) {
          const auto* src = As<BufferLoadNode>(sel->true_value);
          Line(fmt::format("at_cp_async_4_or_zero(&{}, {}, {}, {});", EmitIndexed(op->buffer, op->indices).text,
                           BufName(src->buffer), EmitExpr(src->indices[0]).text, EmitExpr(sel->cond).text));
          Use(CHelper::kCpAsync4OrZero);
          return;
        }
        Line(fmt::format("{} = {};", EmitIndexed(op->buffer, op->indices).text, EmitExpr(op->value).text));
        return;
      }
      case StmtKind::kAllocate: return EmitAllocate(As<AllocateNode>(s), tail);
      case StmtKind::kIfThenElse: return EmitIf(As<IfThenElseNode>(s));
      case StmtKind::kSeq: return EmitSeq(As<SeqNode>(s), tail);
      case StmtKind::kBarrier: return EmitBarrier(As<BarrierNode>(s)->async_wait);
      case StmtKind::kTensorize: return EmitTensorized(*As<TensorizeNode>(s));
    }
  }

  // The global load a store into an async_fill buffer copies, when the store can be an asynchronous
  // copy (of one float, or of a vector whose alignment the caller checked).
  static const BufferLoadNode* AsyncCopySource(const BufferStoreNode* st) {
    return CopiesOneGlobalFloat(st, st->value) ? As<BufferLoadNode>(st->value) : nullptr;
  }
  static bool CopiesOneGlobalFloat(const BufferStoreNode* st, const Expr& value) {
    const auto* src = As<BufferLoadNode>(value);
    return st->buffer->async_fill && src && src->buffer->scope == Scope::kGlobal && st->indices.size() == 1 &&
           src->indices.size() == 1 && st->buffer->dtype == DType::kFloat32 && src->buffer->dtype == DType::kFloat32;
  }
  // A store into an async_fill buffer of `cond ? global[i] : 0.0f` (a padded input's copy): one
  // asynchronous copy that writes zero where `cond` is false (cp.async's zero fill), so that padded
  // copies overlap the computation as plain ones do instead of stalling on their loads.
  static const SelectNode* ZeroFilledCopy(const BufferStoreNode* st) {
    const auto* sel = As<SelectNode>(st->value);
    if (!sel || !CopiesOneGlobalFloat(st, sel->true_value)) return nullptr;
    const auto* zero = As<FloatImmNode>(sel->false_value);
    return zero && zero->value == 0.0 ? sel : nullptr;
  }

  // Block-level code that writes memory: run by one thread of the block.
  void EmitSingleThread(const Stmt& s) {
    std::string cond;
    for (int a = 0; a < 3; ++a) {
      if (kernel_->block[a] > 1 && !bound_[3 + a]) cond += fmt::format("{}{} == 0", cond.empty() ? "" : " && ", kBuiltin[3 + a]);
    }
    Line(fmt::format("if ({}) {{", cond));
    ++indent_;
    single_thread_ = true;
    EmitStmt(s, true);
    single_thread_ = false;
    --indent_;
    Line("}");
  }

  // The partner's lane is lane ^ offset only while blockDim.x is a multiple of 32 or a power of two
  // above the offset (then rows of threadIdx.x are aligned groups of a warp's lanes).
  CExpr EmitShuffleXor(const CallNode* op) override {
    const int64_t offset = *AsConstInt(op->args[1]);
    const int64_t dim_x = kernel_ ? kernel_->block[0] : 1;
    const bool aligned = dim_x % 32 == 0 || ((dim_x & (dim_x - 1)) == 0 && offset < dim_x);
    if (!kernel_ || single_thread_ || divergent_ > 0 || !aligned) {
      Fail(fmt::format("warp shuffle by {} lanes under a thread-dependent condition or in a block {} threads wide",
                       offset, dim_x));
      return {"0", kPrecPrimary};
    }
    return {fmt::format("__shfl_xor_sync(0xffffffffu, {}, {})", EmitExpr(op->args[0]).text, offset), kPrecPrimary};
  }

  // `async_wait` >= 0: first wait for this thread's asynchronous copies (see BarrierNode).
  void EmitBarrier(int64_t async_wait = -1) {
    if (async_wait >= 0) {
      // Even a single thread must wait for its own copies; only the block-wide sync is optional then.
      Line(fmt::format("at_cp_async_wait<{}>();", async_wait));
      Use(CHelper::kCpAsyncWait);
    }
    if (single_thread_) return;  // one thread: nothing to order
    if (divergent_ > 0) {
      Fail("barrier under a thread-dependent condition or loop bound");
      return;
    }
    Line("__syncthreads();");
  }

  void EmitSeq(const SeqNode* op, bool tail) {
    // Block-level statements run by different threads: order conflicting accesses with barriers.
    const bool sync = AtBlockLevel() && !single_thread_;
    Accesses pending;
    for (size_t i = 0; i < op->stmts.size(); ++i) {
      const Stmt& c = op->stmts[i];
      if (sync) {
        if (As<BarrierNode>(c)) {
          pending = {};
        } else {
          Accesses a = SyncedAccesses(c);
          if (pending.Conflicts(a)) {
            EmitBarrier();
            pending = {};
          }
          pending.Merge(a);
        }
      }
      EmitStmt(c, tail && i + 1 == op->stmts.size());
    }
  }

  void EmitThreadLoop(const ForNode* op, bool tail) {
    const int t = TagIndex(op->tag);
    const bool thread = IsThreadTag(op->tag);
    const int64_t extent = *AsConstInt(op->extent);  // checked by the plan
    const int64_t dim = thread ? kernel_->block[t - 3] : kernel_->grid[t];
    const bool guard = extent < dim;
    if (guard) {
      Line(fmt::format("if ({} < {}) {{", kBuiltin[t], extent));
      if (thread) ++divergent_;
    } else if (!tail) {
      Line("{");
    }
    if (guard || !tail) ++indent_;
    const std::string& v = VarName(op->var.get());
    std::string value = fmt::format("({}){}", TypeName(op->var->dtype), kBuiltin[t]);
    if (!IsConstInt(op->min, 0)) value += " + " + Paren(EmitExpr(op->min), kPrecAdd + 1);
    if (UsesVar(op->body, op->var.get())) Line(fmt::format("const {} {} = {};", TypeName(op->var->dtype), v, value));
    if (const int64_t* min = AsConstInt(op->min)) bounds_.Bind(op->var, *min, extent);
    live_vars_.insert(op->var.get());
    if (thread) thread_vars_.insert(op->var.get());
    bound_[t] = true;
    EmitStmt(op->body, true);
    bound_[t] = false;
    thread_vars_.erase(op->var.get());
    live_vars_.erase(op->var.get());
    bounds_.Unbind(op->var);
    if (guard || !tail) {
      --indent_;
      Line("}");
    }
    if (guard && thread) --divergent_;
  }

  void EmitLoop(const ForNode* op, bool tail) {
    if (op->for_kind == ForKind::kVectorized && EmitVectorized(op, tail)) return;
    if (CudaFullyUnrolls(op)) Line("#pragma unroll");
    const std::string& v = VarName(op->var.get());
    const std::string begin = EmitExpr(op->min).text;
    const Expr end = IsConstInt(op->min, 0) ? op->extent : Add(op->min, Cast(op->min->dtype, op->extent));
    const std::string end_text = Paren(EmitExpr(end), kPrecRel + 1);
    Line(fmt::format("for ({} {} = {}; {} < {}; ++{}) {{", TypeName(op->var->dtype), v, begin, v, end_text, v));
    const bool dependent = ThreadDependent(op->min) || ThreadDependent(op->extent);
    if (dependent) {
      thread_vars_.insert(op->var.get());
      ++divergent_;
    }
    const int64_t* min = AsConstInt(op->min);
    const int64_t* extent = AsConstInt(op->extent);
    if (min && extent) bounds_.Bind(op->var, *min, *extent);
    live_vars_.insert(op->var.get());
    ++indent_;
    EmitStmt(op->body, true);
    // A block-level loop whose iterations hand data between threads: the next iteration must not
    // overwrite what this one still reads (or read before this one's writes are done).
    if (AtBlockLevel() && !single_thread_) {
      Accesses a = SyncedAccesses(op->body);
      // A buffer only written, each iteration its own elements (a row kernel's output): nothing to order.
      std::erase_if(a.writes, [&](const BufferNode* b) {
        return !a.reads.count(b) && IterationsStoreApart(*op, b, bounds_, thread_vars_);
      });
      // Writes at block level are one thread's, or tensorized tiles' (each element by one lane, the
      // same value in every warp that repeats the tile): with only tiles writing, just a buffer
      // read after it is written hands data between threads.
      const bool tiles_write = HasTensorizedTiles(op->body) && SyncedAccesses(op->body, false).writes.empty();
      if (tiles_write ? a.ReadsWhatItWrites() : a.Conflicts(a)) EmitBarrier();
    }
    --indent_;
    live_vars_.erase(op->var.get());
    bounds_.Unbind(op->var);
    if (dependent) {
      thread_vars_.erase(op->var.get());
      --divergent_;
    }
    Line("}");
  }

  void EmitIf(const IfThenElseNode* op) {
    const bool dependent = ThreadDependent(op->cond);
    if (dependent) ++divergent_;
    Line(fmt::format("if ({}) {{", EmitExpr(op->cond).text));
    ++indent_;
    EmitStmt(op->then_case, true);
    --indent_;
    if (op->else_case && !IsEmptyStmt(op->else_case)) {
      Line("} else {");
      ++indent_;
      EmitStmt(op->else_case, true);
      --indent_;
    }
    Line("}");
    if (dependent) --divergent_;
  }

  void EmitAllocate(const AllocateNode* op, bool tail) {
    const Buffer& b = op->buffer;
    if (b->scope != Scope::kLocal) {
      // Shared memory is declared at the top of the kernel; workspaces are params.
      EmitStmt(op->body, tail);
      return;
    }
    const int64_t* n = b->shape.size() == 1 ? AsConstInt(b->shape[0]) : nullptr;
    if (!n || *n <= 0) {
      Fail("allocation of " + b->name + " is not flat with a positive constant size");
      return;
    }
    // Each allocation gets its own name, so one buffer allocated twice in a scope cannot clash.
    const std::string name = Reserve(b->name);
    auto it = buf_names_.find(b.get());
    std::optional<std::string> saved;
    if (it != buf_names_.end()) saved = it->second;
    buf_names_[b.get()] = name;
    if (auto frag = fragments_.find(b.get()); frag != fragments_.end()) {
      DeclareFragment(b, frag->second, *n, name);
    } else {
      Line(fmt::format("{} {}[{}];", TypeName(b->dtype), name, *n));
    }
    EmitStmt(op->body, tail);
    if (saved) {
      buf_names_[b.get()] = *saved;
    } else {
      buf_names_.erase(b.get());
    }
  }

  // A vectorized loop as float2/float4 accesses (see codegen_cuda.h); false when it does not qualify.
  bool EmitVectorized(const ForNode* op, bool tail) {
    if (EmitPackedCopy(op)) return true;
    const std::optional<VectorizedStore> vs = MatchVectorizedStore(op);
    if (!vs) return false;
    // The vector temporaries need a scope of their own unless nothing follows in this one.
    const bool divergent = vs->guard && ThreadDependent(vs->guard->cond);
    if (vs->guard) {
      divergent_ += divergent;
      Line(fmt::format("if ({}) {{", EmitExpr(vs->guard->cond).text));
      ++indent_;
    } else if (!tail) {
      Line("{");
      ++indent_;
    }
    if (vs->vector_store && vs->plain_copy && AsyncCopySource(vs->store)) {
      EmitAsyncVectorCopy(*vs);
    } else {
      EmitVectorAccesses(*vs);
    }
    if (vs->guard || !tail) {
      --indent_;
      Line("}");
    }
    divergent_ -= divergent;
    return true;
  }

  // A vectorized copy of 2, 4 or 8 16-bit elements (2 or 4 zero-padded float32 ones) between aligned
  // places in shared or global memory: one 4-, 8- or 16-byte access a side (an asynchronous copy into
  // a pipelined copy; tir/analysis/packed_copy.h).
  // A zero-padded copy, `inside ? src[i] : 0` with `inside` the same for every lane, copies or zeros
  // the whole vector.
  bool EmitPackedCopy(const ForNode* op) {
    const std::optional<PackedCopy> copy = MatchPackedCopy(op);
    if (!copy) return false;
    const VarNode* v = op->var.get();
    const IfThenElseNode* guard = copy->guard;
    const BufferStoreNode* st = copy->store;
    const BufferLoadNode* src = copy->src;
    const Expr& inside_cond = copy->inside;
    const bool padded = inside_cond != nullptr;
    const DType elem = st->buffer->dtype;
    auto first = [&](const Expr& e) {
      return Simplify(Substitute(e, [&](const VarNode* x) { return x == v ? IntImm(0, x->dtype) : nullptr; }), &bounds_);
    };
    const bool divergent = guard && ThreadDependent(guard->cond);
    if (guard) {
      divergent_ += divergent;
      Line(fmt::format("if ({}) {{", EmitExpr(guard->cond).text));
      ++indent_;
    }
    const std::string dst = fmt::format("&{}[{}]", BufName(st->buffer), EmitExpr(first(st->indices[0])).text);
    const std::string from = fmt::format("&{}[{}]", BufName(src->buffer), EmitExpr(first(src->indices[0])).text);
    const int64_t bytes = copy->lanes * BytesOf(elem);
    const char* type = bytes == 16 ? "uint4" : bytes == 8 ? "uint2" : "unsigned";
    const bool async = st->buffer->async_fill && src->buffer->scope == Scope::kGlobal;
    if (padded) {
      const std::string inside = EmitExpr(first(inside_cond)).text;
      if (async && bytes == 16) {  // cp.async reads nothing and writes zeros where outside
        Use(CHelper::kCpAsync16OrZero);
        Line(fmt::format("at_cp_async_16_or_zero({}, {} ? {} : {}, {});", dst, inside, from, BufName(src->buffer), inside));
      } else {
        Line(fmt::format("*reinterpret_cast<{0}*>({1}) = {3} ? *reinterpret_cast<const {0}*>({2}) : {0}{{}};", type, dst,
                         from, inside));
      }
    } else if (async) {
      Use(bytes == 16 ? CHelper::kCpAsync16 : bytes == 8 ? CHelper::kCpAsync8 : CHelper::kCpAsync4);
      Line(fmt::format("at_cp_async_{}(reinterpret_cast<float*>({}), reinterpret_cast<const float*>({}));", bytes, dst,
                       from));
    } else {
      Line(fmt::format("*reinterpret_cast<{0}*>({1}) = *reinterpret_cast<const {0}*>({2});", type, dst, from));
    }
    if (guard) {
      --indent_;
      Line("}");
    }
    divergent_ -= divergent;
    return true;
  }

  // `e` as lane `lane` computes it: the loop variable replaced by the lane's index.
  Expr AtLane(const VectorizedStore& vs, const Expr& e, int64_t lane) {
    auto lane_index = [&](const VarNode* x) { return x == vs.lane_var ? IntImm(lane, x->dtype) : nullptr; };
    return Simplify(Substitute(e, lane_index), &bounds_);
  }

  // A plain copy from global memory into a pipelined copy: one asynchronous copy.
  void EmitAsyncVectorCopy(const VectorizedStore& vs) {
    const BufferStoreNode* st = vs.store;
    const VectorizedStore::VectorLoad& src = vs.loads[0];
    Line(fmt::format("at_cp_async_{}(&{}[{}], &{}[{}]);", vs.width * 4, BufName(st->buffer),
                     EmitExpr(AtLane(vs, st->indices[0], 0)).text, BufName(src.buffer),
                     EmitExpr(AtLane(vs, src.index, 0)).text));
    Use(vs.width == 4 ? CHelper::kCpAsync16 : CHelper::kCpAsync8);
  }

  // Each vector load into a temporary, then the store of every lane's value: one vector store, or one
  // store per lane.
  void EmitVectorAccesses(const VectorizedStore& vs) {
    const BufferStoreNode* st = vs.store;
    const std::vector<std::vector<Var>> lane_vars = EmitVectorLoads(vs);
    std::vector<std::string> values;
    for (int64_t k = 0; k < vs.width; ++k) {
      std::unordered_map<const BufferLoadNode*, Expr> map;
      for (size_t i = 0; i < vs.loads.size(); ++i) {
        for (const auto* node : vs.loads[i].nodes) map[node] = lane_vars[i][k];
      }
      values.push_back(EmitExpr(AtLane(vs, LoadReplacer(map).Mutate(st->value), k)).text);
    }
    const Expr& sidx = st->indices[0];
    if (vs.vector_store) {
      const std::string vtype = VectorType(vs.width);
      std::string value;
      if (vs.plain_copy) {  // the loaded vector as it is
        value = var_text_.at(lane_vars[0][0].get()).text;
        value = value.substr(0, value.size() - 2);  // the vector's name, without ".x"
      } else {
        value = "make_" + vtype + "(";
        for (int64_t k = 0; k < vs.width; ++k) value += (k ? ", " : "") + values[k];
        value += ")";
      }
      Line(fmt::format("*reinterpret_cast<{0}*>(&{1}[{2}]) = {3};", vtype, BufName(st->buffer),
                       EmitExpr(AtLane(vs, sidx, 0)).text, value));
    } else {
      for (int64_t k = 0; k < vs.width; ++k) {
        Line(fmt::format("{}[{}] = {};", BufName(st->buffer), EmitExpr(AtLane(vs, sidx, k)).text, values[k]));
      }
    }
    for (const auto& vars : lane_vars) {
      for (const auto& lv : vars) var_text_.erase(lv.get());
    }
  }

  // One `const float4 name = ...` per vector load; returns, per vector load and lane, a variable that
  // prints as that lane of it (`name.x`). The caller forgets their texts when done.
  std::vector<std::vector<Var>> EmitVectorLoads(const VectorizedStore& vs) {
    const std::string vtype = VectorType(vs.width);
    const char* lanes = "xyzw";
    std::vector<std::vector<Var>> lane_vars;
    for (const auto& vl : vs.loads) {
      const std::string name = Reserve(vl.buffer->name + "_v");
      Line(fmt::format("const {0} {1} = *reinterpret_cast<const {0}*>(&{2}[{3}]);", vtype, name, BufName(vl.buffer),
                       EmitExpr(AtLane(vs, vl.index, 0)).text));
      std::vector<Var> vars;
      for (int64_t k = 0; k < vs.width; ++k) {
        Var lv = MakeVar(name, DType::kFloat32);
        var_text_[lv.get()] = CExpr{fmt::format("{}.{}", name, lanes[k]), kPrecPrimary};
        vars.push_back(lv);
      }
      lane_vars.push_back(std::move(vars));
    }
    return lane_vars;
  }

  static std::string VectorType(int64_t width) { return width == 4 ? "float4" : "float2"; }

  // ---- tensor intrinsics (tir/analysis/tensor_intrinsics.h) -------------------------------------
  // The fragments of a kernel: local buffers that tensorized tiles touch, each with one role.
  void FindFragments(const Stmt& body) {
    auto found = FragmentsOf(body);
    if (!found) return Fail(found.error().message);
    fragments_ = std::move(*found);
  }

  // Registers of one tile in a lane: accumulator floats, 32-bit words of two 16-bit elements, or one
  // TF32 value per float32 element (two, high part then low, for a split fragment: all the tile's
  // high parts come first).
  static int64_t RegistersPerTile(const FragmentUse& use, DType element) {
    const int64_t per_lane = TileOf(use.role, element).per_lane;
    if (use.role == FragmentRole::kAccumulator) return per_lane;
    if (IsHalf(element)) return per_lane / 2;
    return use.split ? 2 * per_lane : per_lane;
  }

  // A fragment of n elements as this lane's registers: its share of every tile.
  void DeclareFragment(const Buffer& b, const FragmentUse& use, int64_t n, const std::string& name) {
    const FragmentTile tile = TileOf(use.role, b->dtype);
    if (n % (tile.rows * tile.cols) != 0) {
      Fail(fmt::format("fragment {} of {} elements is not whole {}x{} tiles", b->name, n, tile.rows, tile.cols));
      return;
    }
    const int64_t regs = n / (tile.rows * tile.cols) * RegistersPerTile(use, b->dtype);
    const bool acc = use.role == FragmentRole::kAccumulator;
    Line(fmt::format("{} {}[{}];", acc ? "float" : "unsigned", name, regs));
    Buffer view = MakeBuffer(name, acc ? DType::kFloat32 : DType::kInt32, {IntImm(regs)}, Scope::kLocal);
    buf_names_[view.get()] = name;
    lane_views_[b.get()] = view;
  }

  CExpr EmitIndexed(const Buffer& b, const std::vector<Expr>& indices) override {
    if (auto it = fragments_.find(b.get()); it != fragments_.end()) {
      Fail(fmt::format("fragment {} ({}) is accessed outside a tensor intrinsic", b->name, FragmentRoleName(it->second.role)));
      return {"0", kPrecPrimary};
    }
    return CFamilyPrinter::EmitIndexed(b, indices);
  }

  // Register k of this lane's share of the fragment tile `t`, as an index into its registers.
  std::optional<std::pair<Buffer, Expr>> Register(const TileOperand& t, FragmentRole role, int64_t k) {
    auto view = lane_views_.find(t.buffer.get());
    const std::optional<Expr> tile = FragmentTileIndex(t, role, bounds_);
    if (view == lane_views_.end() || !tile) {
      Fail(fmt::format("fragment {}: the tile at {} is not a whole tile of its {}", t.buffer->name,
                       EmitExpr(t.origin).text, FragmentRoleName(role)));
      return std::nullopt;
    }
    const FragmentUse use = fragments_.count(t.buffer.get()) ? fragments_.at(t.buffer.get()) : FragmentUse{role};
    const int64_t regs = RegistersPerTile(use, t.buffer->dtype);
    return std::make_pair(view->second, Simplify(Add(Mul(*tile, IntImm(regs, (*tile)->dtype)), IntImm(k, (*tile)->dtype)), &bounds_));
  }
  std::string RegisterText(const TileOperand& t, FragmentRole role, int64_t k) {
    auto r = Register(t, role, k);
    return r ? EmitIndexed(r->first, {r->second}).text : "0";
  }

  void EmitTensorized(const TensorizeNode& t) {
    auto call = MatchTensorIntrinsic(t);
    if (!call) return Fail(call.error().message);
    if (!kernel_ || kernel_->block[0] != 32 || bound_[3] || divergent_ > 0 || single_thread_) {
      return Fail(fmt::format("tensor intrinsic {} needs whole warps: blockDim.x of 32 (it is {}), outside threadIdx.x "
                              "loops and thread-dependent conditions", t.intrinsic, kernel_ ? kernel_->block[0] : 0));
    }
    bounds_.Bind(lane_, 0, 32);
    var_text_[lane_.get()] = CExpr{"(int)threadIdx.x", kPrecUnary};
    switch (call->intrinsic->kind) {
      case TensorIntrinsicKind::kMma: EmitMma(*call); break;
      case TensorIntrinsicKind::kFill:
        for (int64_t k = 0; k < 4; ++k) Line(RegisterText(*call->c, FragmentRole::kAccumulator, k) + " = 0.0f;");
        break;
      case TensorIntrinsicKind::kLoadA: EmitFragmentLoad(*call, FragmentRole::kMatrixA); break;
      case TensorIntrinsicKind::kLoadB: EmitFragmentLoad(*call, FragmentRole::kMatrixB); break;
      case TensorIntrinsicKind::kStore: EmitFragmentStore(*call); break;
    }
    var_text_.erase(lane_.get());
    bounds_.Unbind(lane_);
  }

  void EmitMma(const TensorCall& call) {
    std::vector<std::string> acc;
    for (int64_t k = 0; k < 4; ++k) acc.push_back(RegisterText(*call.c, FragmentRole::kAccumulator, k));
    if (call.intrinsic->operands == OperandType::kHalf) {
      const bool bf16 = call.a->buffer->dtype == DType::kBFloat16;
      Use(bf16 ? CHelper::kMmaBF16 : CHelper::kMmaF16);
      std::vector<std::string> regs = acc;
      for (int64_t k = 0; k < 4; ++k) regs.push_back(RegisterText(*call.a, FragmentRole::kMatrixA, k));
      for (int64_t k = 0; k < 2; ++k) regs.push_back(RegisterText(*call.b, FragmentRole::kMatrixB, k));
      Line(fmt::format("at_mma_m16n8k16_{}({});", bf16 ? "bf16" : "f16", fmt::join(regs, ", ")));
      return;
    }
    Use(CHelper::kMmaTF32);
    // part 0: the TF32 values (high parts), part 1: the low parts of a split fragment.
    auto mma = [&](const std::vector<std::string>& into, int a_part, int b_part) {
      std::vector<std::string> regs = into;
      for (int64_t k = 0; k < 4; ++k) regs.push_back(RegisterText(*call.a, FragmentRole::kMatrixA, 4 * a_part + k));
      for (int64_t k = 0; k < 2; ++k) regs.push_back(RegisterText(*call.b, FragmentRole::kMatrixB, 2 * b_part + k));
      Line(fmt::format("at_mma_m16n8k8_tf32({});", fmt::join(regs, ", ")));
    };
    if (call.intrinsic->precision != Precision::kSplitTF32) return mma(acc, 0, 0);
    // The three products of a step go into a zeroed partial sum, the small ones first, and that
    // into the accumulator with a float32 add: the tensor cores' sums truncate, and three of them a
    // step straight into the accumulator drift past float32's accuracy over long reductions.
    const std::vector<std::string> part = {"at_p0", "at_p1", "at_p2", "at_p3"};
    Line("{");
    ++indent_;
    Line("float at_p0 = 0.0f, at_p1 = 0.0f, at_p2 = 0.0f, at_p3 = 0.0f;");
    mma(part, 1, 0);
    mma(part, 0, 1);
    mma(part, 0, 0);
    for (int k = 0; k < 4; ++k) Line(fmt::format("{} += {};", acc[k], part[k]));
    --indent_;
    Line("}");
  }

  // ldmatrix needs every row address 16-byte aligned: rows and the tile's origin a multiple of 8
  // elements apart from the (16-byte aligned) start of a shared array.
  static bool LdmatrixAligned(const TileOperand& src) {
    return src.buffer->scope == Scope::kShared && src.row_step % 8 == 0 && MultipleOf(src.origin, 8);
  }

  // Whether an index is a multiple of `n` whatever its variables are (every coefficient and the
  // constant of its linear form are).
  static bool MultipleOf(const Expr& index, int64_t n) {
    const LinearSum sum = ToLinear(index);
    if (!sum.ok || sum.constant % n != 0) return false;
    for (const auto& t : sum.terms) {
      if (t.coeff % n != 0) return false;
    }
    return true;
  }

  // A tile copied into an A or B fragment: ldmatrix from shared memory, else each lane loads its
  // elements, two to a register. A wide B load (load_b_16x16) fills two B tiles side by side, the
  // second the next tile of the same row of tiles: its registers follow the first's.
  void EmitFragmentLoad(const TensorCall& call, FragmentRole role) {
    if (call.intrinsic->operands == OperandType::kFloat32) return EmitTF32FragmentLoad(call, role);
    const TileOperand& src = *call.a;
    const DType it = src.origin->dtype;
    auto element = [&](const Expr& row, const Expr& col) { return Simplify(src.At(row, col), &bounds_); };
    const Expr lane = Cast(it, lane_);
    const FragmentTile tile = TileOf(role, src.buffer->dtype);
    const int64_t tiles = call.intrinsic->extents[1] / tile.cols;
    const int64_t per_tile = RegistersPerTile({role}, src.buffer->dtype);
    if (tiles > 1 && !NextTileInRow(*call.c, role, tile.cols)) {
      return Fail(fmt::format("{}: its second tile is not in the row of tiles of fragment {}", call.intrinsic->name,
                              call.c->buffer->name));
    }
    if (LdmatrixAligned(src)) {
      std::vector<std::string> args;
      for (int64_t k = 0; k < tiles * per_tile; ++k) args.push_back(RegisterText(*call.c, role, k));
      args.push_back("&" + EmitIndexed(src.buffer, {LdmatrixRowStart(src, role, tiles > 1, lane)}).text);
      const CHelper helper = LdmatrixHelper(role, tiles > 1, src.transposed);
      Use(helper);
      Line(fmt::format("at_ldmatrix_{}({});", LdmatrixSuffix(helper), fmt::join(args, ", ")));
      return;
    }
    for (int64_t w = 0; w < tiles * per_tile; ++w) {
      const Expr col_base = IntImm(w / per_tile * tile.cols, it);
      const auto [r0, c0] = FragmentElement(role, src.buffer->dtype, lane, 2 * (w % per_tile));
      const auto [r1, c1] = FragmentElement(role, src.buffer->dtype, lane, 2 * (w % per_tile) + 1);
      Line(fmt::format("{} = (unsigned){} | ((unsigned){} << 16);", RegisterText(*call.c, role, w),
                       EmitIndexed(src.buffer, {element(r0, Add(c0, col_base))}).text,
                       EmitIndexed(src.buffer, {element(r1, Add(c1, col_base))}).text));
    }
  }

  // Whether the tile after fragment tile `t` (`cols` elements to its right) is in the same row of tiles.
  bool NextTileInRow(const TileOperand& t, FragmentRole role, int64_t cols) {
    TileOperand next = t;
    next.origin = Add(t.origin, IntImm(cols, t.origin->dtype));
    return FragmentTileIndex(next, role, bounds_).has_value();
  }

  static CHelper LdmatrixHelper(FragmentRole role, bool wide, bool transposed) {
    if (role == FragmentRole::kMatrixA) return CHelper::kLdmatrixX4;
    if (wide) return transposed ? CHelper::kLdmatrixX4 : CHelper::kLdmatrixX4Trans;
    return transposed ? CHelper::kLdmatrixX2 : CHelper::kLdmatrixX2Trans;
  }

  // The shared-memory row lane `lane` gives ldmatrix. A (and a wide B from [k][n] rows): row l % 16
  // of the tile, lanes 16-31 its right half (column 8). B from [k][n] rows (.trans): k row l % 16. B
  // from [n][k] rows (no .trans; the 8x8 matrices are k 0-7 and 8-15 of the tile's 8 columns, then,
  // wide, of the next 8): column l % 8 (+ 8 * (l / 16)), k 8 * (l / 8 % 2).
  Expr LdmatrixRowStart(const TileOperand& src, FragmentRole role, bool wide, const Expr& lane) {
    const DType it = lane->dtype;
    auto c = [&](int64_t v) { return IntImm(v, it); };
    if (role == FragmentRole::kMatrixA || (wide && !src.transposed)) {
      return Simplify(src.At(FloorMod(lane, c(16)), Mul(FloorDiv(lane, c(16)), c(8))), &bounds_);
    }
    if (!src.transposed) return Simplify(src.At(FloorMod(lane, c(16)), c(0)), &bounds_);
    Expr col = FloorMod(lane, c(8));
    if (wide) col = Add(col, Mul(FloorDiv(lane, c(16)), c(8)));
    return Simplify(src.At(Mul(FloorMod(FloorDiv(lane, c(8)), c(2)), c(8)), col), &bounds_);
  }

  static const char* LdmatrixSuffix(CHelper h) {
    switch (h) {
      case CHelper::kLdmatrixX4: return "x4";
      case CHelper::kLdmatrixX4Trans: return "x4_trans";
      case CHelper::kLdmatrixX2: return "x2";
      default: return "x2_trans";
    }
  }

  // A float32 tile into an A or B fragment, each element rounded to TF32 (and split into its high
  // and low parts where the fragment is split). A from 16-byte-aligned shared rows is one ldmatrix.x4
  // (its four 8x8 matrices of 16-bit pairs are the four 8x4 quarters of the tile, each lane's word
  // the element of its TF32 layout); otherwise, and for B, a load per element.
  void EmitTF32FragmentLoad(const TensorCall& call, FragmentRole role) {
    const TileOperand& src = *call.a;
    const DType it = src.origin->dtype;
    const Expr lane = Cast(it, lane_);
    const int64_t n = TileOf(role, DType::kFloat32).per_lane;
    const bool split = fragments_.count(call.c->buffer.get()) && fragments_.at(call.c->buffer.get()).split;
    std::vector<std::string> words;
    for (int64_t e = 0; e < n; ++e) words.push_back(RegisterText(*call.c, role, e));
    auto element = [&](const Expr& row, const Expr& col) { return Simplify(src.At(row, col), &bounds_); };
    std::vector<std::string> values;
    if (role == FragmentRole::kMatrixA && src.buffer->scope == Scope::kShared && src.row_step % 4 == 0 &&
        MultipleOf(src.origin, 4)) {
      // Lane l gives row l % 8 + 8 * (l / 8 % 2), column 4 * (l / 16), of matrix l / 8.
      const Expr row = Add(FloorMod(lane, IntImm(8, it)), Mul(FloorMod(FloorDiv(lane, IntImm(8, it)), IntImm(2, it)), IntImm(8, it)));
      const Expr col = Mul(FloorDiv(lane, IntImm(16, it)), IntImm(4, it));
      std::vector<std::string> args = words;
      args.push_back("&" + EmitIndexed(src.buffer, {element(row, col)}).text);
      Use(CHelper::kLdmatrixX4);
      Line(fmt::format("at_ldmatrix_x4({});", fmt::join(args, ", ")));
      for (const auto& w : words) values.push_back(fmt::format("__uint_as_float({})", w));
    } else {
      for (int64_t e = 0; e < n; ++e) {
        const auto [r, c] = FragmentElement(role, DType::kFloat32, lane, e);
        values.push_back(EmitIndexed(src.buffer, {element(r, c)}).text);
      }
    }
    Use(CHelper::kTF32Bits);
    for (int64_t e = 0; e < n; ++e) {
      if (!split) {
        Line(fmt::format("{} = at_tf32_bits({});", words[e], values[e]));
        continue;
      }
      Line(fmt::format("{{ const float at_x = {}; {} = at_tf32_bits(at_x); {} = at_tf32_bits(at_x - __uint_as_float({})); }}",
                       values[e], words[e], RegisterText(*call.c, role, n + e), words[e]));
    }
  }

  // The tile's statement once per accumulator element of the lane, at that element's row and column;
  // the two elements of a row together where they make one 32-bit store.
  void EmitFragmentStore(const TensorCall& call) {
    const int64_t n = TileOf(FragmentRole::kAccumulator, DType::kFloat32).per_lane;
    std::vector<Stmt> at(n);
    for (int64_t e = 0; e < n; ++e) {
      at[e] = ElementStatement(call, e);
      if (!at[e]) return;
    }
    warp_collective_ = true;
    for (int64_t e = 0; e < n; e += 2) {  // elements e and e + 1: one row, columns c and c + 1
      if (EmitPairedStore(at[e], at[e + 1])) continue;
      EmitStmt(at[e], false);
      EmitStmt(at[e + 1], false);
    }
    warp_collective_ = false;
  }

  // The tile's statement at accumulator element `e` of the lane; null (and a failure) when the
  // element's register has no index.
  Stmt ElementStatement(const TensorCall& call, int64_t e) {
    const TileOperand& acc = *call.c;
    const auto reg = Register(acc, FragmentRole::kAccumulator, e);
    if (!reg) return nullptr;
    const std::pair<Expr, Expr> at = FragmentElement(FragmentRole::kAccumulator, DType::kFloat32, lane_, e);
    const Expr row = at.first, col = at.second;  // (named, not bound: a lambda captures them)
    const VarNode* i = call.loops[0].get();
    const VarNode* j = call.loops[1].get();
    Stmt s = Substitute(call.inner, [&](const VarNode* v) -> Expr {
      if (v == i) return Cast(v->dtype, row);
      if (v == j) return Cast(v->dtype, col);
      return nullptr;
    });
    s = RegisterLoads(acc.buffer.get(), Load(reg->first, {reg->second})).Mutate(s);
    return Simplify(s, &bounds_);
  }

  // Two stores of 16-bit or float32 values into consecutive elements, aligned to the pair, under one
  // condition (or none): emitted as one 32-bit (two halves) or 64-bit (float2) store. False when they
  // are not that.
  bool EmitPairedStore(const Stmt& first, const Stmt& second) {
    Expr c0, c1;
    const BufferStoreNode* a = GuardedStore(first, &c0);
    const BufferStoreNode* b = GuardedStore(second, &c1);
    const bool f32 = a && a->buffer->dtype == DType::kFloat32;
    if (!a || !b || a->buffer != b->buffer || !(IsHalf(a->buffer->dtype) || f32) || a->buffer->scope == Scope::kLocal ||
        a->indices.size() != 1 || (c0 == nullptr) != (c1 == nullptr) || (c0 && !ExprDeepEqual(c0, c1)) ||
        !IsConstInt(Simplify(Sub(b->indices[0], a->indices[0]), &bounds_), 1) || !MultipleOf(a->indices[0], 2)) {
      return false;
    }
    if (c0) {
      divergent_ += ThreadDependent(c0);
      Line(fmt::format("if ({}) {{", EmitExpr(c0).text));
      ++indent_;
    }
    if (f32) {
      Line(fmt::format("*reinterpret_cast<float2*>(&{}[{}]) = make_float2({}, {});", BufName(a->buffer),
                       EmitExpr(a->indices[0]).text, EmitExpr(a->value).text, EmitExpr(b->value).text));
    } else {
      Line(fmt::format("*reinterpret_cast<unsigned*>(&{}[{}]) = (unsigned){} | ((unsigned){} << 16);", BufName(a->buffer),
                       EmitExpr(a->indices[0]).text, Paren(EmitExpr(a->value), kPrecUnary),
                       Paren(EmitExpr(b->value), kPrecUnary)));
    }
    if (c0) {
      --indent_;
      Line("}");
      divergent_ -= ThreadDependent(c0);
    }
    return true;
  }

  // `s` as a store, maybe under a condition without else (put in `cond`); null when it is not one.
  static const BufferStoreNode* GuardedStore(const Stmt& s, Expr* cond) {
    const auto* guard = As<IfThenElseNode>(s);
    if (!guard) return As<BufferStoreNode>(s);
    if (guard->else_case && !IsEmptyStmt(guard->else_case)) return nullptr;
    *cond = guard->cond;
    return As<BufferStoreNode>(guard->then_case);
  }

  // Replaces every load of one fragment by a load of the lane's register.
  class RegisterLoads : public IRMutator {
   public:
    RegisterLoads(const BufferNode* frag, Expr reg) : frag_(frag), reg_(std::move(reg)) {}
    Expr Mutate_(const BufferLoadNode* op, const Expr& self) override {
      return op->buffer.get() == frag_ ? reg_ : MutateFields(op, self);
    }

   private:
    const BufferNode* frag_;
    Expr reg_;
  };

  std::ostringstream body_;
  int indent_ = 0;
  std::vector<Buffer> args_;  // params, then workspaces
  const CudaKernelPlan* kernel_ = nullptr;
  std::array<bool, 6> bound_{};                   // thread axes with an enclosing loop
  std::unordered_set<const VarNode*> thread_vars_;  // variables that differ between threads of a block
  int divergent_ = 0;                              // depth of thread-dependent control flow
  bool single_thread_ = false;                     // inside a block-level single-thread guard
  bool warp_collective_ = false;                   // emitting a lane's share of a tensorized tile
  FragmentMap fragments_;                                          // of the kernel being emitted
  std::unordered_map<const BufferNode*, Buffer> lane_views_;       // fragment -> this lane's registers
  const Var lane_ = MakeVar("lane");                                // prints as threadIdx.x
};

}  // namespace

Result<CudaModule> CodegenCuda(const PrimFunc& f) { return CudaEmitter().Run(f); }

}  // namespace autotune::tir
