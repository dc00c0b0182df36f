// Expression nodes. Nodes are immutable values shared through std::shared_ptr<const T>; build them
// with the factory functions below, which check their inputs.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tir/dtype.h"
#include "tir/node_kinds.h"

namespace autotune::tir {

enum class ExprKind : uint8_t {
#define AUTOTUNE_X(n) k##n,
  AUTOTUNE_EXPR_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
};

// A value computed from a node's fields on first use (0: not yet). A copy starts empty, since a
// copied node is made to change its fields. Relaxed atomics: threads may race to fill it alike.
class NodeHashCache {
 public:
  NodeHashCache() = default;
  NodeHashCache(const NodeHashCache&) {}
  NodeHashCache& operator=(const NodeHashCache&) {
    value_.store(0, std::memory_order_relaxed);
    return *this;
  }
  size_t Get() const { return value_.load(std::memory_order_relaxed); }
  void Set(size_t v) const { value_.store(v, std::memory_order_relaxed); }

 private:
  mutable std::atomic<size_t> value_{0};
};

struct ExprNode {
  ExprKind kind;
  DType dtype;
  NodeHashCache term_hash;  // TermHash (tir/transform/linear_form.h), for compound nodes
  ExprNode(ExprKind k, DType t) : kind(k), dtype(t) {}
  ExprNode(const ExprNode&) = default;
  virtual ~ExprNode() = default;
};
using Expr = std::shared_ptr<const ExprNode>;

// Checked downcast: nullptr when `e` is not a T.
template <class T>
const T* As(const Expr& e) {
  return e && e->kind == T::kKind ? static_cast<const T*>(e.get()) : nullptr;
}

// Declares the reflected fields of a node: equality, hashing, visiting and mutation iterate them.
#define AUTOTUNE_FIELDS(...)                                      \
  auto Fields() const { return std::tie(__VA_ARGS__); }          \
  auto Fields() { return std::tie(__VA_ARGS__); }

struct BufferNode;
using Buffer = std::shared_ptr<const BufferNode>;

struct IntImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  int64_t value;
  IntImmNode(DType t, int64_t v) : ExprNode(kKind, t), value(v) {}
  AUTOTUNE_FIELDS(value)
};

struct FloatImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  double value;
  FloatImmNode(DType t, double v) : ExprNode(kKind, t), value(v) {}
  AUTOTUNE_FIELDS(value)
};

// A variable is identified by its node, not its name; names are for printing only.
struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kVar;
  std::string name;
  VarNode(DType t, std::string n) : ExprNode(kKind, t), name(std::move(n)) {}
  auto Fields() const { return std::tie(); }
  auto Fields() { return std::tie(); }
};
using Var = std::shared_ptr<const VarNode>;

enum class BinaryOp : uint8_t {
  kAdd, kSub, kMul, kDiv,  // kDiv is true division: floats only
  kFloorDiv, kFloorMod,    // integers, rounding towards minus infinity
  kMin, kMax,
  kEQ, kNE, kLT, kLE, kGT, kGE,
  kAnd, kOr,
};
const char* BinaryOpName(BinaryOp op);
inline bool IsComparison(BinaryOp op) { return op >= BinaryOp::kEQ && op <= BinaryOp::kGE; }
inline bool IsLogical(BinaryOp op) { return op == BinaryOp::kAnd || op == BinaryOp::kOr; }

struct BinaryNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBinary;
  BinaryOp op;
  Expr a, b;
  BinaryNode(DType t, BinaryOp o, Expr x, Expr y) : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
  AUTOTUNE_FIELDS(op, a, b)
};

struct NotNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kNot;
  Expr a;
  explicit NotNode(Expr x) : ExprNode(kKind, DType::kBool), a(std::move(x)) {}
  AUTOTUNE_FIELDS(a)
};

struct SelectNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kSelect;
  Expr cond, true_value, false_value;
  SelectNode(DType t, Expr c, Expr x, Expr y)
      : ExprNode(kKind, t), cond(std::move(c)), true_value(std::move(x)), false_value(std::move(y)) {}
  AUTOTUNE_FIELDS(cond, true_value, false_value)
};

struct CastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCast;
  Expr value;
  CastNode(DType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  AUTOTUNE_FIELDS(value)
};

struct BufferLoadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBufferLoad;
  Buffer buffer;
  std::vector<Expr> indices;
  BufferLoadNode(DType t, Buffer buf, std::vector<Expr> idx)
      : ExprNode(kKind, t), buffer(std::move(buf)), indices(std::move(idx)) {}
  AUTOTUNE_FIELDS(buffer, indices)
};

// A call of a pure intrinsic by name: exp, log, sqrt, fabs, tanh, sigmoid, ...
struct CallNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCall;
  std::string name;
  std::vector<Expr> args;
  CallNode(DType t, std::string n, std::vector<Expr> a) : ExprNode(kKind, t), name(std::move(n)), args(std::move(a)) {}
  AUTOTUNE_FIELDS(name, args)
};

enum class ReduceOp : uint8_t { kSum, kMax, kMin };
const char* ReduceOpName(ReduceOp op);

// A commutative reduction of `source` over `axis` (each axis ranging over [0, extent)). Appears only
// in compute definitions; lowering turns it into an init store and an update store.
struct ReduceNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kReduce;
  ReduceOp combiner;
  Expr source;
  std::vector<Var> axis;
  std::vector<Expr> extents;
  ReduceNode(DType t, ReduceOp c, Expr s, std::vector<Var> ax, std::vector<Expr> ext)
      : ExprNode(kKind, t), combiner(c), source(std::move(s)), axis(std::move(ax)), extents(std::move(ext)) {}
  AUTOTUNE_FIELDS(combiner, source, axis, extents)
};

// ---- Factories -------------------------------------------------------------------------------
Expr IntImm(int64_t v, DType t = DType::kInt32);
Expr FloatImm(double v, DType t = DType::kFloat32);
Expr Bool(bool v);
Var MakeVar(std::string name, DType t = DType::kInt32);
Expr MakeBinary(BinaryOp op, Expr a, Expr b);
Expr Add(Expr a, Expr b);
Expr Sub(Expr a, Expr b);
Expr Mul(Expr a, Expr b);
Expr Div(Expr a, Expr b);
Expr FloorDiv(Expr a, Expr b);
Expr FloorMod(Expr a, Expr b);
Expr Min(Expr a, Expr b);
Expr Max(Expr a, Expr b);
Expr EQ(Expr a, Expr b);
Expr NE(Expr a, Expr b);
Expr LT(Expr a, Expr b);
Expr LE(Expr a, Expr b);
Expr GT(Expr a, Expr b);
Expr GE(Expr a, Expr b);
Expr And(Expr a, Expr b);
Expr Or(Expr a, Expr b);
Expr Not(Expr a);
Expr Select(Expr cond, Expr t, Expr f);
Expr Cast(DType t, Expr v);
Expr Load(Buffer buffer, std::vector<Expr> indices);
Expr Call(DType t, std::string name, std::vector<Expr> args);
Expr Reduce(ReduceOp op, Expr source, std::vector<Var> axis, std::vector<Expr> extents);
// A warp shuffle: `value` as held by the thread whose threadIdx.x is this thread's XOR `lane_offset`
// (a power of two below 32 and below blockDim.x), every thread of the warp taking part. CUDA
// codegen emits __shfl_xor_sync; SerializeThreads turns it into an exchange through memory.
Expr ShuffleXor(Expr value, int64_t lane_offset);
bool IsShuffleXor(const CallNode* c);
// Zero of a floating-point type: an immediate, or for a 16-bit type a float32 zero cast to it.
Expr ZeroOf(DType t);
// Identity element of a reduction in dtype `t` (0 for sum, lowest for max, highest for min).
Expr ReduceIdentity(ReduceOp op, DType t);

// Convenience arithmetic for building index expressions (no simplification is done here).
inline Expr operator+(const Expr& a, const Expr& b) { return Add(a, b); }
inline Expr operator-(const Expr& a, const Expr& b) { return Sub(a, b); }
inline Expr operator*(const Expr& a, const Expr& b) { return Mul(a, b); }
inline Expr operator+(const Expr& a, int64_t b) { return Add(a, IntImm(b, a->dtype)); }
inline Expr operator-(const Expr& a, int64_t b) { return Sub(a, IntImm(b, a->dtype)); }
inline Expr operator*(const Expr& a, int64_t b) { return Mul(a, IntImm(b, a->dtype)); }

// Constant value of an integer expression, if it is an IntImm.
inline const int64_t* AsConstInt(const Expr& e) {
  const auto* n = As<IntImmNode>(e);
  return n ? &n->value : nullptr;
}
inline bool IsConstInt(const Expr& e, int64_t v) {
  const auto* p = AsConstInt(e);
  return p && *p == v;
}

}  // namespace autotune::tir
