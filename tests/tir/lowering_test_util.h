// Building and running small TIR programs for the lowering-pass tests: loop and buffer shorthands, a
// tiny interpreter, a count of what the passes add or remove, and a GPU-style gemm kernel with the
// inputs and reference result to check it against.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tir/buffer.h"
#include "tir/functor.h"
#include "tir/prim_func.h"
#include "tir/stmt.h"

namespace autotune::tir::testing {

// ---- Shorthands for hand-built pre-lowered programs ----

Expr I(int64_t v);
Stmt Serial(const Var& v, int64_t extent, Stmt body, int64_t unroll = 0);
Stmt Loop(const Var& v, int64_t extent, ForKind kind, Stmt body);
Stmt Bind(const Var& v, int64_t extent, ThreadTag tag, Stmt body, int64_t unroll = 0);
Buffer Buf(const std::string& name, std::vector<int64_t> shape, Scope scope = Scope::kGlobal,
           std::vector<int64_t> strides = {});

// ---- A tiny interpreter ----

// Runs a statement on double-valued buffers (float32 stores round to float). Thread-bound loops run
// as serial loops, which is valid only for programs without cross-thread communication (or after
// SerializeThreads). Reads of uninitialized memory give NaN, so they show up in the results.
class Interpreter {
 public:
  void Set(const Buffer& b, std::vector<double> data) { mem_[b.get()] = std::move(data); }
  const std::vector<double>& Get(const Buffer& b) const { return mem_.at(b.get()); }
  void Exec(const Stmt& s);

  int64_t stores = 0;

 private:
  void ExecFor(const ForNode* op);
  void ExecAllocate(const AllocateNode* op);
  int64_t Int(const Expr& e) { return static_cast<int64_t>(Eval(e)); }
  double& Slot(const Buffer& b, const std::vector<Expr>& indices);
  double Eval(const Expr& e);
  double EvalVar(const VarNode* op);
  double EvalBinary(const BinaryNode* op);

  std::unordered_map<const BufferNode*, std::vector<double>> mem_;
  std::unordered_map<const VarNode*, int64_t> env_;
  double dummy_ = 0;
};

// ---- What the passes add or remove ----

struct Census : IRVisitor {
  int vthread_loops = 0, barriers = 0, multi_index_accesses = 0;
  void Visit_(const ForNode* op) override;
  void Visit_(const BarrierNode*) override { ++barriers; }
  void Visit_(const BufferLoadNode* op) override;
  void Visit_(const BufferStoreNode* op) override;
};
Census Count(const Stmt& s);

// ---- A GPU-style gemm kernel ----

// C[8, 8] = A[8, 8] * B[8, 8] as schedule_ops would produce it for a GPU: two blocks of 4 rows,
// two virtual threads and two threads per block (row = bx * 4 + vt * 2 + tx), a local accumulator
// row per (virtual) thread, and with `shared` the A and B tiles of each k-step loaded cooperatively
// into shared memory inside the reduction loop. `unroll` is the block loop's auto_unroll_max_step.
struct Gemm {
  Buffer A = Buf("A", {8, 8}), B = Buf("B", {8, 8}), C = Buf("C", {8, 8});
  Stmt body;

  explicit Gemm(bool shared, int64_t unroll = 0);
  PrimFunc Func(Stmt s) const { return PrimFunc{"gemm", {A, B, C}, std::move(s)}; }
};

// n float-representable values of a sine wave times `scale`: fixed, irregular test inputs.
std::vector<double> Iota(int n, double scale);
// Runs `f` (params A, B, C of 8x8) on fixed inputs; returns C.
std::vector<double> RunGemm(const PrimFunc& f);
// What RunGemm must return: the product in float arithmetic, k ascending.
std::vector<double> ReferenceGemm();
void ExpectNear(const std::vector<double>& got, const std::vector<double>& want);

}  // namespace autotune::tir::testing
