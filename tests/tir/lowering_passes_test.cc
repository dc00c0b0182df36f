// Tests of the lowering passes in tir/lower/: InjectVirtualThread, StorageFlatten,
// LiftSharedAllocations, InsertBarriers, UnrollLoops. Golden text of hand-built pre-lowered programs,
// invariants, and semantic checks with a small interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <unordered_map>
#include <map>
#include <set>
#include <unordered_set>
#include <vector>

#include "tir/buffer.h"
#include "tir/functor.h"
#include "tir/lower/inject_virtual_thread.h"
#include "tir/lower/insert_barriers.h"
#include "tir/lower/lift_shared_allocations.h"
#include "tir/lower/storage_flatten.h"
#include "tir/lower/unroll_loops.h"
#include "tir/prim_func.h"
#include "tir/printer.h"
#include "tir/stmt.h"
#include "tir/transform/serialize_threads.h"

namespace autotune::tir {
namespace {

// ---- Building blocks ---------------------------------------------------------------------------

Expr I(int64_t v) { return IntImm(v); }
Stmt Serial(const Var& v, int64_t extent, Stmt body, int64_t unroll = 0) {
  return For(v, I(0), I(extent), ForKind::kSerial, std::move(body), ThreadTag::kNone, unroll);
}
Stmt Loop(const Var& v, int64_t extent, ForKind kind, Stmt body) {
  return For(v, I(0), I(extent), kind, std::move(body));
}
Stmt Bind(const Var& v, int64_t extent, ThreadTag tag, Stmt body, int64_t unroll = 0) {
  return For(v, I(0), I(extent), ForKind::kThreadBinding, std::move(body), tag, unroll);
}
Buffer Buf(const std::string& name, std::vector<int64_t> shape, Scope scope = Scope::kGlobal,
           std::vector<int64_t> strides = {}) {
  std::vector<Expr> s, st;
  for (int64_t d : shape) s.push_back(I(d));
  for (int64_t d : strides) st.push_back(I(d));
  return MakeBuffer(name, DType::kFloat32, s, scope, st);
}

// ---- A tiny interpreter ------------------------------------------------------------------------
// Runs a statement on double-valued buffers (float32 stores round to float). Thread-bound loops run
// as serial loops, which is valid only for programs without cross-thread communication (or after
// SerializeThreads). Reads of uninitialized memory give NaN, so they show up in the results.
class Interpreter {
 public:
  void Set(const Buffer& b, std::vector<double> data) { mem_[b.get()] = std::move(data); }
  const std::vector<double>& Get(const Buffer& b) const { return mem_.at(b.get()); }

  void Exec(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::kFor: {
        const auto* op = As<ForNode>(s);
        int64_t mn = Int(op->min), ext = Int(op->extent);
        for (int64_t i = mn; i < mn + ext; ++i) {
          env_[op->var.get()] = i;
          Exec(op->body);
        }
        env_.erase(op->var.get());
        return;
      }
      case StmtKind::kBufferStore: {
        const auto* op = As<BufferStoreNode>(s);
        double v = Eval(op->value);
        if (op->buffer->dtype == DType::kFloat32) v = static_cast<float>(v);
        Slot(op->buffer, op->indices) = v;
        ++stores;
        return;
      }
      case StmtKind::kAllocate: {
        const auto* op = As<AllocateNode>(s);
        ASSERT_EQ(mem_.count(op->buffer.get()), 0u) << "buffer " << op->buffer->name << " allocated twice";
        mem_[op->buffer.get()].assign(Int(BufferElemCount(op->buffer)), std::numeric_limits<double>::quiet_NaN());
        Exec(op->body);
        mem_.erase(op->buffer.get());
        return;
      }
      case StmtKind::kIfThenElse: {
        const auto* op = As<IfThenElseNode>(s);
        if (Eval(op->cond) != 0) Exec(op->then_case);
        else if (op->else_case) Exec(op->else_case);
        return;
      }
      case StmtKind::kSeq:
        for (const auto& c : As<SeqNode>(s)->stmts) Exec(c);
        return;
      case StmtKind::kBarrier: return;
    }
  }

  int64_t stores = 0;

 private:
  int64_t Int(const Expr& e) { return static_cast<int64_t>(Eval(e)); }

  double& Slot(const Buffer& b, const std::vector<Expr>& indices) {
    auto it = mem_.find(b.get());
    if (it == mem_.end()) {
      ADD_FAILURE() << "access of unknown buffer " << b->name;
      return dummy_;
    }
    std::vector<Expr> strides = BufferStrides(b);
    int64_t off = 0;
    for (size_t k = 0; k < indices.size(); ++k) {
      int64_t idx = Int(indices[k]);
      if (idx < 0 || idx >= Int(b->shape[k])) {
        ADD_FAILURE() << "index " << idx << " out of range in dimension " << k << " of " << b->name;
        return dummy_;
      }
      off += idx * Int(strides[k]);
    }
    if (off < 0 || off >= static_cast<int64_t>(it->second.size())) {
      ADD_FAILURE() << "offset " << off << " out of range of " << b->name;
      return dummy_;
    }
    return it->second[off];
  }

  double Eval(const Expr& e) {
    switch (e->kind) {
      case ExprKind::kIntImm: return static_cast<double>(As<IntImmNode>(e)->value);
      case ExprKind::kFloatImm: return As<FloatImmNode>(e)->value;
      case ExprKind::kVar: {
        auto it = env_.find(As<VarNode>(e));
        if (it == env_.end()) {
          ADD_FAILURE() << "unbound variable " << As<VarNode>(e)->name;
          return 0;
        }
        return static_cast<double>(it->second);
      }
      case ExprKind::kBinary: {
        const auto* op = As<BinaryNode>(e);
        double a = Eval(op->a), b = Eval(op->b);
        // Integer views of float operands (NaN or out of range becomes 0: the cast would be UB).
        auto as_int = [](double x) { return std::fabs(x) < 9e18 ? static_cast<int64_t>(x) : int64_t{0}; };
        const int64_t ia = as_int(a), ib = as_int(b);
        switch (op->op) {
          case BinaryOp::kAdd: return a + b;
          case BinaryOp::kSub: return a - b;
          case BinaryOp::kMul: return a * b;
          case BinaryOp::kDiv: return a / b;
          case BinaryOp::kFloorDiv: return static_cast<double>(ia / ib - ((ia % ib != 0) && ((ia < 0) != (ib < 0))));
          case BinaryOp::kFloorMod: {
            int64_t r = ia % ib;
            if (r != 0 && ((r < 0) != (ib < 0))) r += ib;
            return static_cast<double>(r);
          }
          case BinaryOp::kMin: return std::min(a, b);
          case BinaryOp::kMax: return std::max(a, b);
          case BinaryOp::kEQ: return a == b;
          case BinaryOp::kNE: return a != b;
          case BinaryOp::kLT: return a < b;
          case BinaryOp::kLE: return a <= b;
          case BinaryOp::kGT: return a > b;
          case BinaryOp::kGE: return a >= b;
          case BinaryOp::kAnd: return a != 0 && b != 0;
          case BinaryOp::kOr: return a != 0 || b != 0;
        }
        return 0;
      }
      case ExprKind::kNot: return Eval(As<NotNode>(e)->a) == 0;
      case ExprKind::kSelect: {
        const auto* op = As<SelectNode>(e);
        return Eval(op->cond) != 0 ? Eval(op->true_value) : Eval(op->false_value);
      }
      case ExprKind::kCast: {
        double v = Eval(As<CastNode>(e)->value);
        return IsInt(e->dtype) ? std::trunc(v) : v;
      }
      case ExprKind::kBufferLoad: {
        const auto* op = As<BufferLoadNode>(e);
        return Slot(op->buffer, op->indices);
      }
      case ExprKind::kCall:
      case ExprKind::kReduce: ADD_FAILURE() << "the interpreter does not run calls or reductions"; return 0;
    }
    return 0;
  }

  std::unordered_map<const BufferNode*, std::vector<double>> mem_;
  std::unordered_map<const VarNode*, int64_t> env_;
  double dummy_ = 0;
};

// ---- Invariant checkers ------------------------------------------------------------------------

struct Census : IRVisitor {
  int vthread_loops = 0, barriers = 0, multi_index_accesses = 0;
  void Visit_(const ForNode* op) override {
    vthread_loops += op->tag == ThreadTag::kVThread;
    VisitFields(op);
  }
  void Visit_(const BarrierNode*) override { ++barriers; }
  void Visit_(const BufferLoadNode* op) override {
    multi_index_accesses += op->indices.size() != 1;
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    multi_index_accesses += op->indices.size() != 1;
    VisitFields(op);
  }
};
Census Count(const Stmt& s) {
  Census c;
  c.Visit(s);
  return c;
}

// Every shared Allocate is the direct body of a blockIdx loop or of another shared Allocate that is.
struct SharedPlacement : IRVisitor {
  int misplaced = 0, shared = 0;
  void Visit_(const ForNode* op) override {
    if (IsBlockTag(op->tag)) {
      Stmt s = op->body;
      while (const auto* a = As<AllocateNode>(s)) {
        if (a->buffer->scope != Scope::kShared) break;
        placed.insert(a);
        s = a->body;
      }
    }
    VisitFields(op);
  }
  void Visit_(const AllocateNode* op) override {
    if (op->buffer->scope == Scope::kShared) {
      ++shared;
      misplaced += placed.count(op) == 0;
    }
    VisitFields(op);
  }
  std::unordered_set<const AllocateNode*> placed;
};

// ---- Programs ----------------------------------------------------------------------------------

// C[8, 8] = A[8, 8] * B[8, 8] as schedule_ops would produce it for a GPU: two blocks of 4 rows,
// two virtual threads and two threads per block (row = bx * 4 + vt * 2 + tx), a local accumulator
// row per (virtual) thread, and with `shared` the A and B tiles of each k-step loaded cooperatively
// into shared memory inside the reduction loop.
struct Gemm {
  Buffer A = Buf("A", {8, 8}), B = Buf("B", {8, 8}), C = Buf("C", {8, 8});
  Stmt body;

  explicit Gemm(bool shared, int64_t unroll = 0) {
    Var bx = MakeVar("bx"), vt = MakeVar("vt"), tx = MakeVar("tx");
    Var j = MakeVar("j"), ko = MakeVar("ko"), ki = MakeVar("ki"), ax = MakeVar("ax");
    Buffer c_local = Buf("C_local", {8}, Scope::kLocal);
    Expr row = bx * 4 + vt * 2 + tx;
    Stmt init = Serial(j, 8, Store(c_local, FloatImm(0), {j}));
    Stmt update;
    if (shared) {
      Buffer a_sh = Buf("A_shared", {4, 4}, Scope::kShared);
      Buffer b_sh = Buf("B_shared", {4, 8}, Scope::kShared, {9, 1});  // padded rows
      Expr ia = ax * 2 + tx;
      Stmt load_a = Serial(ax, 8,
                           Store(a_sh, Load(A, {bx * 4 + FloorDiv(ia, I(4)), ko * 4 + FloorMod(ia, I(4))}),
                                 {FloorDiv(ia, I(4)), FloorMod(ia, I(4))}));
      Stmt load_b = Serial(ax, 16,
                           Store(b_sh, Load(B, {ko * 4 + FloorDiv(ia, I(8)), FloorMod(ia, I(8))}),
                                 {FloorDiv(ia, I(8)), FloorMod(ia, I(8))}));
      Stmt compute = Serial(
          ki, 4,
          Serial(j, 8, Store(c_local, Load(c_local, {j}) + Load(a_sh, {vt * 2 + tx, ki}) * Load(b_sh, {ki, j}), {j})));
      update = Serial(ko, 2, Allocate(a_sh, Allocate(b_sh, Seq({load_a, load_b, compute}))));
    } else {
      Stmt compute = Serial(
          ki, 4, Serial(j, 8, Store(c_local, Load(c_local, {j}) + Load(A, {row, ko * 4 + ki}) * Load(B, {ko * 4 + ki, j}), {j})));
      update = Serial(ko, 2, compute);
    }
    Stmt write = Serial(j, 8, Store(C, Load(c_local, {j}), {row, j}));
    body = Bind(bx, 2, ThreadTag::kBlockIdxX,
                Bind(vt, 2, ThreadTag::kVThread,
                     Bind(tx, 2, ThreadTag::kThreadIdxX, Allocate(c_local, Seq({init, update, write})))),
                unroll);
  }

  PrimFunc Func(Stmt s) const { return PrimFunc{"gemm", {A, B, C}, std::move(s)}; }
};

std::vector<double> Iota(int n, double scale) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(1.0 + i) * scale);
  return v;
}

// Runs `f` (params A, B, C of 8x8) on fixed inputs; returns C.
std::vector<double> RunGemm(const PrimFunc& f) {
  Interpreter in;
  in.Set(f.params[0], Iota(64, 1.0));
  in.Set(f.params[1], Iota(64, 0.5));
  in.Set(f.params[2], std::vector<double>(64, std::numeric_limits<double>::quiet_NaN()));
  in.Exec(f.body);
  return in.Get(f.params[2]);
}

std::vector<double> ReferenceGemm() {
  std::vector<double> a = Iota(64, 1.0), b = Iota(64, 0.5), c(64);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      float acc = 0;
      for (int k = 0; k < 8; ++k) acc = static_cast<float>(acc + static_cast<float>(a[i * 8 + k] * b[k * 8 + j]));
      c[i * 8 + j] = acc;
    }
  }
  return c;
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << "element " << i;
}

// ---- InjectVirtualThread -----------------------------------------------------------------------

TEST(InjectVirtualThread, GemmWithSharedMemory) {
  Gemm g(/*shared=*/true);
  Stmt out = InjectVirtualThread(g.body);
  EXPECT_EQ(Count(out).vthread_loops, 0);
  // The shared loads do not depend on the virtual thread: emitted once. The accumulator gets one row
  // per virtual thread, and the copies of each statement that uses it are innermost.
  EXPECT_EQ(ToString(out), R"(for (bx: int32, 0, 2) thread_binding "blockIdx.x" {
  for (tx: int32, 0, 2) thread_binding "threadIdx.x" {
    allocate C_local: float32[2, 8] local {
      for (j: int32, 0, 8) serial {
        for (vt: int32, 0, 2) unrolled {
          C_local[vt, j] = 0f
        }
      }
      for (ko: int32, 0, 2) serial {
        allocate A_shared: float32[4, 4] shared {
          allocate B_shared: float32[4, 8] shared strides=[9, 1] {
            for (ax: int32, 0, 8) serial {
              A_shared[floordiv(((ax * 2) + tx), 4), floormod(((ax * 2) + tx), 4)] = A[((bx * 4) + floordiv(((ax * 2) + tx), 4)), ((ko * 4) + floormod(((ax * 2) + tx), 4))]
            }
            for (ax: int32, 0, 16) serial {
              B_shared[floordiv(((ax * 2) + tx), 8), floormod(((ax * 2) + tx), 8)] = B[((ko * 4) + floordiv(((ax * 2) + tx), 8)), floormod(((ax * 2) + tx), 8)]
            }
            for (ki: int32, 0, 4) serial {
              for (j: int32, 0, 8) serial {
                for (vt_1: int32, 0, 2) unrolled {
                  C_local[vt_1, j] = (C_local[vt_1, j] + (A_shared[((vt_1 * 2) + tx), ki] * B_shared[ki, j]))
                }
              }
            }
          }
        }
      }
      for (j: int32, 0, 8) serial {
        for (vt_2: int32, 0, 2) unrolled {
          C[(((bx * 4) + (vt_2 * 2)) + tx), j] = C_local[vt_2, j]
        }
      }
    }
  }
}
)");
}

TEST(InjectVirtualThread, KeepsSemanticsOfKernelWithoutSharedMemory) {
  Gemm g(/*shared=*/false);
  ExpectNear(RunGemm(g.Func(g.body)), ReferenceGemm());
  Stmt out = InjectVirtualThread(g.body);
  EXPECT_EQ(Count(out).vthread_loops, 0);
  ExpectNear(RunGemm(g.Func(out)), ReferenceGemm());
  PrimFunc flat = StorageFlatten(g.Func(out));
  EXPECT_EQ(Count(flat.body).multi_index_accesses, 0);
  ExpectNear(RunGemm(flat), ReferenceGemm());
}

// Two vthread levels; the dependence on the virtual threads flows through local buffers.
struct NestedVThreads {
  Buffer A = Buf("A", {4, 4}), C = Buf("C", {4, 4});
  Buffer t = Buf("t", {2}, Scope::kLocal), u = Buf("u", {2}, Scope::kLocal), w = Buf("w", {1}, Scope::kLocal);
  Stmt body;
  NestedVThreads() {
    Var vy = MakeVar("vy"), vx = MakeVar("vx"), tx = MakeVar("tx"), jj = MakeVar("jj");
    Expr i = vy * 2 + tx, j = vx * 2 + jj;
    body = Bind(
        vy, 2, ThreadTag::kVThread,
        Bind(vx, 2, ThreadTag::kVThread,
             Bind(tx, 2, ThreadTag::kThreadIdxX,
                  Allocate(t, Allocate(u, Allocate(w, Seq({
                      Store(w, FloatImm(3), {I(0)}),  // independent of the virtual threads
                      Serial(jj, 2, Store(t, Load(A, {i, j}), {jj})),
                      Serial(jj, 2, Store(u, Load(t, {jj}) * Load(w, {I(0)}), {jj})),
                      Serial(jj, 2, Store(C, Load(u, {jj}) + FloatImm(1), {i, j})),
                  })))))));
  }
};

TEST(InjectVirtualThread, NestedVThreadsAndBufferDependence) {
  NestedVThreads p;
  Stmt out = InjectVirtualThread(p.body);
  EXPECT_EQ(Count(out).vthread_loops, 0);
  EXPECT_EQ(ToString(out), R"(for (tx: int32, 0, 2) thread_binding "threadIdx.x" {
  allocate t: float32[2, 2, 2] local {
    allocate u: float32[2, 2, 2] local {
      allocate w: float32[1] local {
        w[0] = 3f
        for (jj: int32, 0, 2) serial {
          for (vx: int32, 0, 2) unrolled {
            for (vy: int32, 0, 2) unrolled {
              t[vy, vx, jj] = A[((vy * 2) + tx), ((vx * 2) + jj)]
            }
          }
        }
        for (jj: int32, 0, 2) serial {
          for (vx_1: int32, 0, 2) unrolled {
            for (vy_1: int32, 0, 2) unrolled {
              u[vy_1, vx_1, jj] = (t[vy_1, vx_1, jj] * w[0])
            }
          }
        }
        for (jj: int32, 0, 2) serial {
          for (vx_2: int32, 0, 2) unrolled {
            for (vy_2: int32, 0, 2) unrolled {
              C[((vy_2 * 2) + tx), ((vx_2 * 2) + jj)] = (u[vy_2, vx_2, jj] + 1f)
            }
          }
        }
      }
    }
  }
}
)");

  auto run = [&](const PrimFunc& f) {
    Interpreter in;
    in.Set(f.params[0], Iota(16, 1.0));
    in.Set(f.params[1], std::vector<double>(16, std::numeric_limits<double>::quiet_NaN()));
    in.Exec(f.body);
    return in.Get(f.params[1]);
  };
  std::vector<double> want = run(PrimFunc{"f", {p.A, p.C}, p.body});
  for (double v : want) EXPECT_FALSE(std::isnan(v));
  ExpectNear(run(PrimFunc{"f", {p.A, p.C}, out}), want);
  ExpectNear(run(StorageFlatten(PrimFunc{"f", {p.A, p.C}, out})), want);
}

TEST(InjectVirtualThread, BarrierIsNeverDuplicated) {
  Var vt = MakeVar("vt"), tx = MakeVar("tx");
  Buffer s = Buf("S", {4}, Scope::kShared), c = Buf("C", {8});
  Stmt body = Bind(tx, 4, ThreadTag::kThreadIdxX,
                   Bind(vt, 2, ThreadTag::kVThread,
                        Seq({Store(s, Cast(DType::kFloat32, tx), {tx}), Barrier(),
                             Store(c, Load(s, {FloorMod(tx + 1, I(4))}), {vt * 4 + tx})})));
  Stmt out = InjectVirtualThread(body);
  EXPECT_EQ(Count(out).barriers, 1);
  EXPECT_EQ(ToString(out), R"(for (tx: int32, 0, 4) thread_binding "threadIdx.x" {
  S[tx] = cast<float32>(tx)
  barrier()
  for (vt: int32, 0, 2) unrolled {
    C[((vt * 4) + tx)] = S[floormod((tx + 1), 4)]
  }
}
)");
}

TEST(InjectVirtualThread, StopsAtVectorizedLoopsAndDependentBounds) {
  Var vt = MakeVar("vt"), tx = MakeVar("tx"), v = MakeVar("v"), k = MakeVar("k");
  Buffer c = Buf("C", {16});
  Stmt body = Bind(
      vt, 2, ThreadTag::kVThread,
      Bind(tx, 2, ThreadTag::kThreadIdxX,
           Seq({Loop(v, 4, ForKind::kVectorized, Store(c, FloatImm(1), {vt * 8 + tx * 4 + v})),
                For(k, I(0), vt + 1, ForKind::kSerial, Store(c, FloatImm(2), {vt * 8 + tx * 4 + k})),
                IfThenElse(EQ(vt, I(0)), Store(c, FloatImm(3), {tx})),
                IfThenElse(EQ(tx, I(0)), Store(c, FloatImm(4), {vt}))})));
  EXPECT_EQ(ToString(InjectVirtualThread(body)), R"(for (tx: int32, 0, 2) thread_binding "threadIdx.x" {
  for (vt: int32, 0, 2) unrolled {
    for (v: int32, 0, 4) vectorized {
      C[(((vt * 8) + (tx * 4)) + v)] = 1f
    }
  }
  for (vt_1: int32, 0, 2) unrolled {
    for (k: int32, 0, (vt_1 + 1)) serial {
      C[(((vt_1 * 8) + (tx * 4)) + k)] = 2f
    }
  }
  for (vt_2: int32, 0, 2) unrolled {
    if (vt_2 == 0) {
      C[tx] = 3f
    }
  }
  if (tx == 0) {
    for (vt_3: int32, 0, 2) unrolled {
      C[vt_3] = 4f
    }
  }
}
)");
}

TEST(InjectVirtualThread, NoVThreadIsUnchanged) {
  Gemm g(/*shared=*/true);
  Stmt no_vthread = InjectVirtualThread(g.body);
  EXPECT_EQ(InjectVirtualThread(no_vthread), no_vthread);
}

// ---- StorageFlatten ----------------------------------------------------------------------------

// Buffers reached from a statement, by name.
struct BufferNodes : IRVisitor {
  std::map<std::string, std::set<const BufferNode*>> by_name;
  void VisitBuffer(const Buffer& b) override { by_name[b->name].insert(b.get()); }
};

TEST(StorageFlatten, GemmKernel) {
  Gemm g(/*shared=*/true);
  PrimFunc f = StorageFlatten(g.Func(LiftSharedAllocations(InjectVirtualThread(g.body))));
  EXPECT_EQ(Count(f.body).multi_index_accesses, 0);
  ASSERT_EQ(f.params.size(), 3u);
  for (const auto& p : f.params) {
    ASSERT_EQ(p->shape.size(), 1u);
    EXPECT_TRUE(IsConstInt(p->shape[0], 64));
    EXPECT_TRUE(p->strides.empty());
  }
  BufferNodes nodes;
  nodes.Visit(f.body);
  for (const auto& [name, set] : nodes.by_name) EXPECT_EQ(set.size(), 1u) << name;
  EXPECT_EQ(*nodes.by_name["A"].begin(), f.params[0].get());
  EXPECT_EQ(*nodes.by_name["C"].begin(), f.params[2].get());
  // B_shared has padded rows (stride 9): 36 elements.
  EXPECT_EQ(ToString(f.body), R"(for (bx: int32, 0, 2) thread_binding "blockIdx.x" {
  allocate A_shared: float32[16] shared {
    allocate B_shared: float32[36] shared {
      for (tx: int32, 0, 2) thread_binding "threadIdx.x" {
        allocate C_local: float32[16] local {
          for (j: int32, 0, 8) serial {
            for (vt: int32, 0, 2) unrolled {
              C_local[((vt * 8) + j)] = 0f
            }
          }
          for (ko: int32, 0, 2) serial {
            for (ax: int32, 0, 8) serial {
              A_shared[(tx + (ax * 2))] = A[(((((bx * 32) + (floordiv(ax, 2) * 8)) + (ko * 4)) + (floormod(ax, 2) * 2)) + tx)]
            }
            for (ax: int32, 0, 16) serial {
              B_shared[(((floordiv(ax, 4) * 9) + (floormod(ax, 4) * 2)) + tx)] = B[(((ko * 32) + tx) + (ax * 2))]
            }
            for (ki: int32, 0, 4) serial {
              for (j: int32, 0, 8) serial {
                for (vt_1: int32, 0, 2) unrolled {
                  C_local[((vt_1 * 8) + j)] = (C_local[((vt_1 * 8) + j)] + (A_shared[(((vt_1 * 8) + (tx * 4)) + ki)] * B_shared[((ki * 9) + j)]))
                }
              }
            }
          }
          for (j: int32, 0, 8) serial {
            for (vt_2: int32, 0, 2) unrolled {
              C[((((bx * 32) + (vt_2 * 16)) + (tx * 8)) + j)] = C_local[((vt_2 * 8) + j)]
            }
          }
        }
      }
    }
  }
}
)");
}

TEST(StorageFlatten, SymbolicParamShapeAndZeroRank) {
  Var n = MakeVar("n"), i = MakeVar("i"), j = MakeVar("j");
  Buffer a = MakeBuffer("A", DType::kFloat32, {n, I(4)});
  Buffer s = MakeBuffer("s", DType::kFloat32, {}, Scope::kLocal);
  Stmt body = Allocate(
      s, Seq({Store(s, FloatImm(0), {}),
              For(i, I(0), n, ForKind::kSerial, Serial(j, 4, Store(s, Load(s, {}) + Load(a, {i, j}), {}))),
              Store(a, Load(s, {}), {I(0), I(0)})}));
  PrimFunc f = StorageFlatten(PrimFunc{"f", {a}, body});
  EXPECT_EQ(ToString(f.params[0]->shape[0]), "(n * 4)");
  EXPECT_EQ(ToString(f.body), R"(allocate s: float32[1] local {
  s[0] = 0f
  for (i: int32, 0, n) serial {
    for (j: int32, 0, 4) serial {
      s[0] = (s[0] + A[((i * 4) + j)])
    }
  }
  A[0] = s[0]
}
)");
}

TEST(StorageFlattenDeathTest, NonConstantAllocation) {
  Var n = MakeVar("n");
  Buffer t = MakeBuffer("t", DType::kFloat32, {n}, Scope::kLocal);
  Buffer a = Buf("A", {4});
  PrimFunc f{"f", {a}, Allocate(t, Store(t, FloatImm(0), {I(0)}))};
  EXPECT_DEATH(StorageFlatten(f), "non-constant shape");
}

// ---- LiftSharedAllocations ---------------------------------------------------------------------

TEST(LiftSharedAllocations, GemmKernel) {
  Gemm g(/*shared=*/true);
  Stmt out = LiftSharedAllocations(InjectVirtualThread(g.body));
  SharedPlacement check;
  check.Visit(out);
  EXPECT_EQ(check.shared, 2);
  EXPECT_EQ(check.misplaced, 0);
  EXPECT_EQ(ToString(out), R"(for (bx: int32, 0, 2) thread_binding "blockIdx.x" {
  allocate A_shared: float32[4, 4] shared {
    allocate B_shared: float32[4, 8] shared strides=[9, 1] {
      for (tx: int32, 0, 2) thread_binding "threadIdx.x" {
        allocate C_local: float32[2, 8] local {
          for (j: int32, 0, 8) serial {
            for (vt: int32, 0, 2) unrolled {
              C_local[vt, j] = 0f
            }
          }
          for (ko: int32, 0, 2) serial {
            for (ax: int32, 0, 8) serial {
              A_shared[floordiv(((ax * 2) + tx), 4), floormod(((ax * 2) + tx), 4)] = A[((bx * 4) + floordiv(((ax * 2) + tx), 4)), ((ko * 4) + floormod(((ax * 2) + tx), 4))]
            }
            for (ax: int32, 0, 16) serial {
              B_shared[floordiv(((ax * 2) + tx), 8), floormod(((ax * 2) + tx), 8)] = B[((ko * 4) + floordiv(((ax * 2) + tx), 8)), floormod(((ax * 2) + tx), 8)]
            }
            for (ki: int32, 0, 4) serial {
              for (j: int32, 0, 8) serial {
                for (vt_1: int32, 0, 2) unrolled {
                  C_local[vt_1, j] = (C_local[vt_1, j] + (A_shared[((vt_1 * 2) + tx), ki] * B_shared[ki, j]))
                }
              }
            }
          }
          for (j: int32, 0, 8) serial {
            for (vt_2: int32, 0, 2) unrolled {
              C[(((bx * 4) + (vt_2 * 2)) + tx), j] = C_local[vt_2, j]
            }
          }
        }
      }
    }
  }
}
)");
  EXPECT_EQ(LiftSharedAllocations(out), out);
}

TEST(LiftSharedAllocations, KernelWithoutBlockLoopsAndNestedBlockLoops) {
  Var tx = MakeVar("tx"), k = MakeVar("k"), by = MakeVar("by"), bx = MakeVar("bx"), i = MakeVar("i");
  Buffer s1 = Buf("S1", {4}, Scope::kShared), s2 = Buf("S2", {4}, Scope::kShared);
  Buffer s3 = Buf("S3", {4}, Scope::kShared), s4 = Buf("S4", {4}, Scope::kShared);
  Buffer l = Buf("L", {1}, Scope::kLocal), c = Buf("C", {64});
  auto use = [&](const Buffer& b, Expr at) { return Store(b, Load(c, {at}), {tx}); };
  // A kernel of threads only: S1 goes around the threadIdx loop.
  Stmt k1 = Bind(tx, 4, ThreadTag::kThreadIdxX, Serial(k, 2, Allocate(s1, Allocate(l, use(s1, k * 4 + tx)))));
  // blockIdx.y { S2; blockIdx.x { threadIdx.x { S3, S4 } } }: S2 stays under blockIdx.y, S3 and S4 go
  // just inside blockIdx.x.
  Stmt k2 = Bind(by, 2, ThreadTag::kBlockIdxY,
                 Allocate(s2, Bind(bx, 2, ThreadTag::kBlockIdxX,
                                   Bind(tx, 4, ThreadTag::kThreadIdxX,
                                        Seq({use(s2, by * 4 + tx),
                                             Serial(k, 2, Allocate(s3, use(s3, bx * 4 + k))),
                                             IfThenElse(LT(tx, I(2)), Allocate(s4, use(s4, tx)))})))));
  // Outside any kernel a shared allocation is left alone.
  Stmt host = Serial(i, 1, Allocate(Buf("S5", {4}, Scope::kShared), Store(c, FloatImm(0), {i})));
  Stmt out = LiftSharedAllocations(Seq({k1, k2, host}));
  EXPECT_EQ(ToString(out), R"(allocate S1: float32[4] shared {
  for (tx: int32, 0, 4) thread_binding "threadIdx.x" {
    for (k: int32, 0, 2) serial {
      allocate L: float32[1] local {
        S1[tx] = C[((k * 4) + tx)]
      }
    }
  }
}
for (by: int32, 0, 2) thread_binding "blockIdx.y" {
  allocate S2: float32[4] shared {
    for (bx: int32, 0, 2) thread_binding "blockIdx.x" {
      allocate S3: float32[4] shared {
        allocate S4: float32[4] shared {
          for (tx: int32, 0, 4) thread_binding "threadIdx.x" {
            S2[tx] = C[((by * 4) + tx)]
            for (k: int32, 0, 2) serial {
              S3[tx] = C[((bx * 4) + k)]
            }
            if (tx < 2) {
              S4[tx] = C[tx]
            }
          }
        }
      }
    }
  }
}
for (i: int32, 0, 1) serial {
  allocate S5: float32[4] shared {
    C[i] = 0f
  }
}
)");
}

// ---- InsertBarriers ----------------------------------------------------------------------------

TEST(InsertBarriers, GemmKernel) {
  Gemm g(/*shared=*/true);
  Stmt out = InsertBarriers(LiftSharedAllocations(InjectVirtualThread(g.body)));
  // Before the loads (the previous k-step's reads must be done) and between loads and compute.
  EXPECT_EQ(Count(out).barriers, 2);
  EXPECT_EQ(ToString(out), R"(for (bx: int32, 0, 2) thread_binding "blockIdx.x" {
  allocate A_shared: float32[4, 4] shared {
    allocate B_shared: float32[4, 8] shared strides=[9, 1] {
      for (tx: int32, 0, 2) thread_binding "threadIdx.x" {
        allocate C_local: float32[2, 8] local {
          for (j: int32, 0, 8) serial {
            for (vt: int32, 0, 2) unrolled {
              C_local[vt, j] = 0f
            }
          }
          for (ko: int32, 0, 2) serial {
            barrier()
            for (ax: int32, 0, 8) serial {
              A_shared[floordiv(((ax * 2) + tx), 4), floormod(((ax * 2) + tx), 4)] = A[((bx * 4) + floordiv(((ax * 2) + tx), 4)), ((ko * 4) + floormod(((ax * 2) + tx), 4))]
            }
            for (ax: int32, 0, 16) serial {
              B_shared[floordiv(((ax * 2) + tx), 8), floormod(((ax * 2) + tx), 8)] = B[((ko * 4) + floordiv(((ax * 2) + tx), 8)), floormod(((ax * 2) + tx), 8)]
            }
            barrier()
            for (ki: int32, 0, 4) serial {
              for (j: int32, 0, 8) serial {
                for (vt_1: int32, 0, 2) unrolled {
                  C_local[vt_1, j] = (C_local[vt_1, j] + (A_shared[((vt_1 * 2) + tx), ki] * B_shared[ki, j]))
                }
              }
            }
          }
          for (j: int32, 0, 8) serial {
            for (vt_2: int32, 0, 2) unrolled {
              C[(((bx * 4) + (vt_2 * 2)) + tx), j] = C_local[vt_2, j]
            }
          }
        }
      }
    }
  }
}
)");
  EXPECT_EQ(InsertBarriers(out), out);
}

// The whole GPU path run on the CPU: SerializeThreads splits thread loops at barriers, so the result
// is right only if the barriers are.
TEST(InsertBarriers, GemmKernelRunsCorrectlyWhenThreadsAreSerialized) {
  Gemm g(/*shared=*/true);
  Stmt lifted = LiftSharedAllocations(InjectVirtualThread(g.body));
  auto run = [&](const Stmt& s) {
    PrimFunc f = StorageFlatten(g.Func(s));
    Result<Stmt> serial = SerializeThreads(f.body);
    EXPECT_TRUE(serial.ok()) << (serial.ok() ? "" : serial.error().message);
    if (!serial.ok()) return std::vector<double>{};
    f.body = *serial;
    return RunGemm(f);
  };
  ExpectNear(run(InsertBarriers(lifted)), ReferenceGemm());
  // Without barriers the threads' shared loads are not complete when they are read.
  std::vector<double> wrong = run(lifted), want = ReferenceGemm();
  bool differs = false;
  for (size_t i = 0; i < want.size(); ++i) differs |= !(std::fabs(wrong[i] - want[i]) < 1e-4);
  EXPECT_TRUE(differs);
}

TEST(InsertBarriers, NoneWithoutSharedMemory) {
  Gemm g(/*shared=*/false);
  Stmt in = InjectVirtualThread(g.body);
  EXPECT_EQ(InsertBarriers(in), in);
  // Local buffers never need barriers.
  Var tx = MakeVar("tx");
  Buffer l = Buf("L", {4}, Scope::kLocal), c = Buf("C", {4});
  Stmt local = Bind(tx, 4, ThreadTag::kThreadIdxX,
                    Allocate(l, Seq({Store(l, FloatImm(1), {tx}), Store(c, Load(l, {FloorMod(tx + 1, I(4))}), {tx})})));
  EXPECT_EQ(InsertBarriers(local), local);
}

TEST(InsertBarriers, HoistedOutOfLoopsAndDivergentCode) {
  // The tile is loaded once under a thread-dependent predicate, then read in a loop: one barrier,
  // between the If and the loop (not inside the If, not inside the loop).
  Var bx = MakeVar("bx"), tx = MakeVar("tx"), k = MakeVar("k"), ax = MakeVar("ax");
  Buffer s = Buf("S", {6}, Scope::kShared), a = Buf("A", {12}), c = Buf("C", {8});
  Stmt load = Serial(ax, 2, IfThenElse(LT(ax * 4 + tx, I(6)), Store(s, Load(a, {bx * 6 + ax * 4 + tx}), {ax * 4 + tx})));
  Stmt use = Serial(k, 6, Store(c, Load(c, {bx * 4 + tx}) + Load(s, {k}), {bx * 4 + tx}));
  Stmt body = Bind(bx, 2, ThreadTag::kBlockIdxX,
                   Allocate(s, Bind(tx, 4, ThreadTag::kThreadIdxX, Seq({load, use}))));
  Stmt out = InsertBarriers(body);
  EXPECT_EQ(Count(out).barriers, 1);
  EXPECT_EQ(ToString(out), R"(for (bx: int32, 0, 2) thread_binding "blockIdx.x" {
  allocate S: float32[6] shared {
    for (tx: int32, 0, 4) thread_binding "threadIdx.x" {
      for (ax: int32, 0, 2) serial {
        if (((ax * 4) + tx) < 6) {
          S[((ax * 4) + tx)] = A[(((bx * 6) + (ax * 4)) + tx)]
        }
      }
      barrier()
      for (k: int32, 0, 6) serial {
        C[((bx * 4) + tx)] = (C[((bx * 4) + tx)] + S[k])
      }
    }
  }
}
)");
}

TEST(InsertBarriers, WriteAfterReadAndLoopCarried) {
  // for k { S[tx] = ...; C[tx] += S[tx ^ 1] } then S written again after the loop and read back.
  Var tx = MakeVar("tx"), k = MakeVar("k");
  Buffer s = Buf("S", {4}, Scope::kShared), c = Buf("C", {4}), a = Buf("A", {16});
  Stmt loop = Serial(k, 4, Seq({Store(s, Load(a, {k * 4 + tx}), {tx}),
                                Store(c, Load(c, {tx}) + Load(s, {FloorMod(tx + 1, I(4))}), {tx})}));
  Stmt body = Bind(tx, 4, ThreadTag::kThreadIdxX,
                   Allocate(s, Seq({Store(c, FloatImm(0), {tx}), loop, Store(s, FloatImm(2), {tx}),
                                    Store(c, Load(c, {tx}) * Load(s, {FloorMod(tx + 3, I(4))}), {tx})})));
  Stmt out = InsertBarriers(body);
  EXPECT_EQ(ToString(out), R"(for (tx: int32, 0, 4) thread_binding "threadIdx.x" {
  allocate S: float32[4] shared {
    C[tx] = 0f
    for (k: int32, 0, 4) serial {
      barrier()
      S[tx] = A[((k * 4) + tx)]
      barrier()
      C[tx] = (C[tx] + S[floormod((tx + 1), 4)])
    }
    barrier()
    S[tx] = 2f
    barrier()
    C[tx] = (C[tx] * S[floormod((tx + 3), 4)])
  }
}
)");
}

TEST(InsertBarriers, RespectsExistingBarriersAndDivergentCode) {
  Var tx = MakeVar("tx");
  Buffer s = Buf("S", {4}, Scope::kShared), c = Buf("C", {4});
  // Already synchronized: nothing to add.
  Stmt synced = Bind(tx, 4, ThreadTag::kThreadIdxX,
                     Allocate(s, Seq({Store(s, FloatImm(1), {tx}), Barrier(),
                                      Store(c, Load(s, {FloorMod(tx + 1, I(4))}), {tx})})));
  EXPECT_EQ(InsertBarriers(synced), synced);
  // Writer and reader both under a thread-dependent condition: a barrier there could deadlock, so
  // none is put there (such a program is not a valid kernel in the first place).
  Stmt divergent = Bind(tx, 4, ThreadTag::kThreadIdxX,
                        Allocate(s, IfThenElse(LT(tx, I(2)), Seq({Store(s, FloatImm(1), {tx}),
                                                                  Store(c, Load(s, {tx + 1}), {tx})}))));
  EXPECT_EQ(InsertBarriers(divergent), divergent);
}

// ---- UnrollLoops -------------------------------------------------------------------------------

TEST(UnrollLoops, CpuLoopNest) {
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k"), v = MakeVar("v"), m = MakeVar("m");
  Var p = MakeVar("p"), q = MakeVar("q");
  Buffer c = Buf("C", {64, 64});
  auto st = [&](Expr x, Expr y) { return Store(c, Load(c, {x, y}) + FloatImm(1), {x, y}); };
  Stmt body = For(
      i, I(0), I(64), ForKind::kParallel,
      Seq({
          // 4 * (2 + 1) = 12 steps <= 16: both loops unrolled.
          Serial(j, 4, Seq({Serial(k, 2, st(i, j * 2 + k)), st(i, j)})),
          // A vectorized loop keeps its kind and keeps the loop around it rolled.
          Serial(p, 2, Loop(v, 4, ForKind::kVectorized, st(i, p * 4 + v))),
          // 32 steps > 16: stays serial; its inner loop (2 steps) is unrolled.
          Serial(m, 16, Serial(q, 2, st(i, m * 2 + q))),
          // An inner pragma overrides the outer one for its subtree: 4 * 8 = 32 <= 64.
          Serial(p, 4, Serial(q, 8, st(i, p * 8 + q)), /*unroll=*/64),
      }),
      ThreadTag::kNone, /*auto_unroll_max_step=*/16);
  EXPECT_EQ(ToString(UnrollLoops(body)), R"(for (i: int32, 0, 64) parallel auto_unroll_max_step=16 {
  for (j: int32, 0, 4) unrolled {
    for (k: int32, 0, 2) unrolled {
      C[i, ((j * 2) + k)] = (C[i, ((j * 2) + k)] + 1f)
    }
    C[i, j] = (C[i, j] + 1f)
  }
  for (p: int32, 0, 2) serial {
    for (v: int32, 0, 4) vectorized {
      C[i, ((p * 4) + v)] = (C[i, ((p * 4) + v)] + 1f)
    }
  }
  for (m: int32, 0, 16) serial {
    for (q: int32, 0, 2) unrolled {
      C[i, ((m * 2) + q)] = (C[i, ((m * 2) + q)] + 1f)
    }
  }
  for (p: int32, 0, 4) serial auto_unroll_max_step=64 {
    for (q: int32, 0, 8) unrolled {
      C[i, ((p * 8) + q)] = (C[i, ((p * 8) + q)] + 1f)
    }
  }
}
)");
}

TEST(UnrollLoops, ExplicitUnrollAndNoPragma) {
  Var n = MakeVar("n"), i = MakeVar("i"), j = MakeVar("j");
  Buffer c = Buf("C", {64});
  Stmt body = Seq({
      For(i, I(0), n, ForKind::kUnrolled, Store(c, FloatImm(0), {i})),  // unknown trip count: serial
      Loop(j, 128, ForKind::kUnrolled, Store(c, FloatImm(1), {FloorMod(j, I(64))})),  // stays unrolled
      Serial(j, 2, Store(c, FloatImm(2), {j})),  // no pragma: stays serial
  });
  EXPECT_EQ(ToString(UnrollLoops(body)), R"(for (i: int32, 0, n) serial {
  C[i] = 0f
}
for (j: int32, 0, 128) unrolled {
  C[floormod(j, 64)] = 1f
}
for (j: int32, 0, 2) serial {
  C[j] = 2f
}
)");
}

TEST(UnrollLoops, GpuKernelWithPragmaOnBlockLoop) {
  Gemm g(/*shared=*/true, /*unroll=*/64);
  Stmt in = InsertBarriers(LiftSharedAllocations(InjectVirtualThread(g.body)));
  Stmt out = UnrollLoops(in);
  // Thread-bound loops keep their kind; init and write-back (8 * 2 steps), the loads (8 and 16
  // steps) and the compute nest (4 * 8 * 2 = 64 steps) are unrolled; the k loop around them is not.
  EXPECT_EQ(ToString(out), R"(for (bx: int32, 0, 2) thread_binding "blockIdx.x" auto_unroll_max_step=64 {
  allocate A_shared: float32[4, 4] shared {
    allocate B_shared: float32[4, 8] shared strides=[9, 1] {
      for (tx: int32, 0, 2) thread_binding "threadIdx.x" {
        allocate C_local: float32[2, 8] local {
          for (j: int32, 0, 8) unrolled {
            for (vt: int32, 0, 2) unrolled {
              C_local[vt, j] = 0f
            }
          }
          for (ko: int32, 0, 2) serial {
            barrier()
            for (ax: int32, 0, 8) unrolled {
              A_shared[floordiv(((ax * 2) + tx), 4), floormod(((ax * 2) + tx), 4)] = A[((bx * 4) + floordiv(((ax * 2) + tx), 4)), ((ko * 4) + floormod(((ax * 2) + tx), 4))]
            }
            for (ax: int32, 0, 16) unrolled {
              B_shared[floordiv(((ax * 2) + tx), 8), floormod(((ax * 2) + tx), 8)] = B[((ko * 4) + floordiv(((ax * 2) + tx), 8)), floormod(((ax * 2) + tx), 8)]
            }
            barrier()
            for (ki: int32, 0, 4) unrolled {
              for (j: int32, 0, 8) unrolled {
                for (vt_1: int32, 0, 2) unrolled {
                  C_local[vt_1, j] = (C_local[vt_1, j] + (A_shared[((vt_1 * 2) + tx), ki] * B_shared[ki, j]))
                }
              }
            }
          }
          for (j: int32, 0, 8) unrolled {
            for (vt_2: int32, 0, 2) unrolled {
              C[(((bx * 4) + (vt_2 * 2)) + tx), j] = C_local[vt_2, j]
            }
          }
        }
      }
    }
  }
}
)");
}

}  // namespace
}  // namespace autotune::tir
