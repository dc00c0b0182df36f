// Building and running small TIR programs for the lowering-pass tests (see lowering_test_util.h).
#include "tests/tir/lowering_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace autotune::tir::testing {

// ---- Shorthands ----

Expr I(int64_t v) { return IntImm(v); }
Stmt Serial(const Var& v, int64_t extent, Stmt body, int64_t unroll) {
  return For(v, I(0), I(extent), ForKind::kSerial, std::move(body), ThreadTag::kNone, unroll);
}
Stmt Loop(const Var& v, int64_t extent, ForKind kind, Stmt body) {
  return For(v, I(0), I(extent), kind, std::move(body));
}
Stmt Bind(const Var& v, int64_t extent, ThreadTag tag, Stmt body, int64_t unroll) {
  return For(v, I(0), I(extent), ForKind::kThreadBinding, std::move(body), tag, unroll);
}
Buffer Buf(const std::string& name, std::vector<int64_t> shape, Scope scope, std::vector<int64_t> strides) {
  std::vector<Expr> s, st;
  for (int64_t d : shape) s.push_back(I(d));
  for (int64_t d : strides) st.push_back(I(d));
  return MakeBuffer(name, DType::kFloat32, s, scope, st);
}

// ---- Interpreter ----

void Interpreter::Exec(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::kFor: ExecFor(As<ForNode>(s)); return;
    case StmtKind::kBufferStore: {
      const auto* op = As<BufferStoreNode>(s);
      double v = Eval(op->value);
      if (op->buffer->dtype == DType::kFloat32) v = static_cast<float>(v);
      Slot(op->buffer, op->indices) = v;
      ++stores;
      return;
    }
    case StmtKind::kAllocate: ExecAllocate(As<AllocateNode>(s)); return;
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
    case StmtKind::kTensorize: Exec(As<TensorizeNode>(s)->body); return;
  }
}

void Interpreter::ExecFor(const ForNode* op) {
  int64_t mn = Int(op->min), ext = Int(op->extent);
  for (int64_t i = mn; i < mn + ext; ++i) {
    env_[op->var.get()] = i;
    Exec(op->body);
  }
  env_.erase(op->var.get());
}

void Interpreter::ExecAllocate(const AllocateNode* op) {
  ASSERT_EQ(mem_.count(op->buffer.get()), 0u) << "buffer " << op->buffer->name << " allocated twice";
  mem_[op->buffer.get()].assign(Int(BufferElemCount(op->buffer)), std::numeric_limits<double>::quiet_NaN());
  Exec(op->body);
  mem_.erase(op->buffer.get());
}

double& Interpreter::Slot(const Buffer& b, const std::vector<Expr>& indices) {
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

double Interpreter::Eval(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIntImm: return static_cast<double>(As<IntImmNode>(e)->value);
    case ExprKind::kFloatImm: return As<FloatImmNode>(e)->value;
    case ExprKind::kVar: return EvalVar(As<VarNode>(e));
    case ExprKind::kBinary: return EvalBinary(As<BinaryNode>(e));
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

double Interpreter::EvalVar(const VarNode* op) {
  auto it = env_.find(op);
  if (it == env_.end()) {
    ADD_FAILURE() << "unbound variable " << op->name;
    return 0;
  }
  return static_cast<double>(it->second);
}

double Interpreter::EvalBinary(const BinaryNode* op) {
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

// ---- Census ----

void Census::Visit_(const ForNode* op) {
  vthread_loops += op->tag == ThreadTag::kVThread;
  VisitFields(op);
}
void Census::Visit_(const BufferLoadNode* op) {
  multi_index_accesses += op->indices.size() != 1;
  VisitFields(op);
}
void Census::Visit_(const BufferStoreNode* op) {
  multi_index_accesses += op->indices.size() != 1;
  VisitFields(op);
}

Census Count(const Stmt& s) {
  Census c;
  c.Visit(s);
  return c;
}

// ---- Gemm ----

namespace {

// One variable per loop name: the init, compute and write-back loops share j, as in the kernel
// schedule_ops makes.
struct GemmVars {
  Var bx = MakeVar("bx"), vt = MakeVar("vt"), tx = MakeVar("tx");
  Var j = MakeVar("j"), ko = MakeVar("ko"), ki = MakeVar("ki"), ax = MakeVar("ax");
};

// Each k-step's A tile [4, 4] and B tile [4, 8] (rows padded to 9) loaded by the block's two
// threads, then the step's product accumulated from the tiles.
Stmt SharedUpdate(const Gemm& g, const GemmVars& v, const Buffer& c_local) {
  Buffer a_sh = Buf("A_shared", {4, 4}, Scope::kShared);
  Buffer b_sh = Buf("B_shared", {4, 8}, Scope::kShared, {9, 1});  // padded rows
  Expr ia = v.ax * 2 + v.tx;
  Stmt load_a = Serial(v.ax, 8,
                       Store(a_sh, Load(g.A, {v.bx * 4 + FloorDiv(ia, I(4)), v.ko * 4 + FloorMod(ia, I(4))}),
                             {FloorDiv(ia, I(4)), FloorMod(ia, I(4))}));
  Stmt load_b = Serial(v.ax, 16,
                       Store(b_sh, Load(g.B, {v.ko * 4 + FloorDiv(ia, I(8)), FloorMod(ia, I(8))}),
                             {FloorDiv(ia, I(8)), FloorMod(ia, I(8))}));
  Stmt compute = Serial(v.ki, 4,
                        Serial(v.j, 8,
                               Store(c_local,
                                     Load(c_local, {v.j}) + Load(a_sh, {v.vt * 2 + v.tx, v.ki}) * Load(b_sh, {v.ki, v.j}),
                                     {v.j})));
  return Serial(v.ko, 2, Allocate(a_sh, Allocate(b_sh, Seq({load_a, load_b, compute}))));
}

// Each k-step's product accumulated straight from the global inputs.
Stmt GlobalUpdate(const Gemm& g, const GemmVars& v, const Expr& row, const Buffer& c_local) {
  Expr product = Load(g.A, {row, v.ko * 4 + v.ki}) * Load(g.B, {v.ko * 4 + v.ki, v.j});
  return Serial(v.ko, 2, Serial(v.ki, 4, Serial(v.j, 8, Store(c_local, Load(c_local, {v.j}) + product, {v.j}))));
}

}  // namespace

Gemm::Gemm(bool shared, int64_t unroll) {
  GemmVars v;
  Buffer c_local = Buf("C_local", {8}, Scope::kLocal);
  Expr row = v.bx * 4 + v.vt * 2 + v.tx;
  Stmt init = Serial(v.j, 8, Store(c_local, FloatImm(0), {v.j}));
  Stmt update = shared ? SharedUpdate(*this, v, c_local) : GlobalUpdate(*this, v, row, c_local);
  Stmt write = Serial(v.j, 8, Store(C, Load(c_local, {v.j}), {row, v.j}));
  body = Bind(v.bx, 2, ThreadTag::kBlockIdxX,
              Bind(v.vt, 2, ThreadTag::kVThread,
                   Bind(v.tx, 2, ThreadTag::kThreadIdxX, Allocate(c_local, Seq({init, update, write})))),
              unroll);
}

std::vector<double> Iota(int n, double scale) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(1.0 + i) * scale);
  return v;
}

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

}  // namespace autotune::tir::testing
