#include "tir/expr.h"

#include <limits>

#include "tir/buffer.h"
#include "support/check.h"

namespace autotune::tir {

const char* BinaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kFloorDiv: return "floordiv";
    case BinaryOp::kFloorMod: return "floormod";
    case BinaryOp::kMin: return "min";
    case BinaryOp::kMax: return "max";
    case BinaryOp::kEQ: return "==";
    case BinaryOp::kNE: return "!=";
    case BinaryOp::kLT: return "<";
    case BinaryOp::kLE: return "<=";
    case BinaryOp::kGT: return ">";
    case BinaryOp::kGE: return ">=";
    case BinaryOp::kAnd: return "&&";
    case BinaryOp::kOr: return "||";
  }
  return "?";
}

const char* ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

Expr IntImm(int64_t v, DType t) {
  AUTOTUNE_CHECK(IsInt(t) || t == DType::kBool, "IntImm needs an integer dtype");
  return std::make_shared<IntImmNode>(t, v);
}
Expr FloatImm(double v, DType t) {
  AUTOTUNE_CHECK(IsFloat(t), "FloatImm needs a float dtype");
  return std::make_shared<FloatImmNode>(t, v);
}
Expr Bool(bool v) { return std::make_shared<IntImmNode>(DType::kBool, v ? 1 : 0); }
Var MakeVar(std::string name, DType t) { return std::make_shared<VarNode>(t, std::move(name)); }

Expr MakeBinary(BinaryOp op, Expr a, Expr b) {
  AUTOTUNE_CHECK(a && b, "binary operand is null");
  AUTOTUNE_CHECK(a->dtype == b->dtype, "binary operands must have the same dtype");
  DType t = a->dtype;
  if (IsComparison(op)) {
    t = DType::kBool;
  } else if (IsLogical(op)) {
    AUTOTUNE_CHECK(a->dtype == DType::kBool, "logical operands must be bool");
  } else if (op == BinaryOp::kDiv) {
    AUTOTUNE_CHECK(IsFloat(a->dtype), "true division is for floats; use floordiv for integers");
  } else if (op == BinaryOp::kFloorDiv || op == BinaryOp::kFloorMod) {
    AUTOTUNE_CHECK(IsInt(a->dtype), "floordiv/floormod are for integers");
  }
  return std::make_shared<BinaryNode>(t, op, std::move(a), std::move(b));
}
Expr Add(Expr a, Expr b) { return MakeBinary(BinaryOp::kAdd, std::move(a), std::move(b)); }
Expr Sub(Expr a, Expr b) { return MakeBinary(BinaryOp::kSub, std::move(a), std::move(b)); }
Expr Mul(Expr a, Expr b) { return MakeBinary(BinaryOp::kMul, std::move(a), std::move(b)); }
Expr Div(Expr a, Expr b) { return MakeBinary(BinaryOp::kDiv, std::move(a), std::move(b)); }
Expr FloorDiv(Expr a, Expr b) { return MakeBinary(BinaryOp::kFloorDiv, std::move(a), std::move(b)); }
Expr FloorMod(Expr a, Expr b) { return MakeBinary(BinaryOp::kFloorMod, std::move(a), std::move(b)); }
Expr Min(Expr a, Expr b) { return MakeBinary(BinaryOp::kMin, std::move(a), std::move(b)); }
Expr Max(Expr a, Expr b) { return MakeBinary(BinaryOp::kMax, std::move(a), std::move(b)); }
Expr EQ(Expr a, Expr b) { return MakeBinary(BinaryOp::kEQ, std::move(a), std::move(b)); }
Expr NE(Expr a, Expr b) { return MakeBinary(BinaryOp::kNE, std::move(a), std::move(b)); }
Expr LT(Expr a, Expr b) { return MakeBinary(BinaryOp::kLT, std::move(a), std::move(b)); }
Expr LE(Expr a, Expr b) { return MakeBinary(BinaryOp::kLE, std::move(a), std::move(b)); }
Expr GT(Expr a, Expr b) { return MakeBinary(BinaryOp::kGT, std::move(a), std::move(b)); }
Expr GE(Expr a, Expr b) { return MakeBinary(BinaryOp::kGE, std::move(a), std::move(b)); }
Expr And(Expr a, Expr b) { return MakeBinary(BinaryOp::kAnd, std::move(a), std::move(b)); }
Expr Or(Expr a, Expr b) { return MakeBinary(BinaryOp::kOr, std::move(a), std::move(b)); }
Expr Not(Expr a) {
  AUTOTUNE_CHECK(a && a->dtype == DType::kBool, "Not needs a bool operand");
  return std::make_shared<NotNode>(std::move(a));
}
Expr Select(Expr cond, Expr t, Expr f) {
  AUTOTUNE_CHECK(cond && t && f, "select operand is null");
  AUTOTUNE_CHECK(cond->dtype == DType::kBool, "select condition must be bool");
  AUTOTUNE_CHECK(t->dtype == f->dtype, "select branches must have the same dtype");
  DType dt = t->dtype;
  return std::make_shared<SelectNode>(dt, std::move(cond), std::move(t), std::move(f));
}
Expr Cast(DType t, Expr v) {
  AUTOTUNE_CHECK(v, "cast of null");
  if (v->dtype == t) return v;
  return std::make_shared<CastNode>(t, std::move(v));
}
Expr Load(Buffer buffer, std::vector<Expr> indices) {
  AUTOTUNE_CHECK(buffer, "load from null buffer");
  AUTOTUNE_CHECK(indices.size() == buffer->shape.size(), "load index count differs from buffer rank");
  for (const auto& i : indices) AUTOTUNE_CHECK(i && IsInt(i->dtype), "load index must be an integer");
  DType t = buffer->dtype;
  return std::make_shared<BufferLoadNode>(t, std::move(buffer), std::move(indices));
}
Expr Call(DType t, std::string name, std::vector<Expr> args) {
  for (const auto& a : args) AUTOTUNE_CHECK(a, "call argument is null");
  return std::make_shared<CallNode>(t, std::move(name), std::move(args));
}
namespace {
constexpr const char* kShuffleXor = "shfl_xor";
}
Expr ShuffleXor(Expr value, int64_t lane_offset) {
  AUTOTUNE_CHECK(value, "shuffle of null");
  AUTOTUNE_CHECK(lane_offset > 0 && lane_offset < 32 && (lane_offset & (lane_offset - 1)) == 0,
                 "a shuffle's lane offset is a power of two below 32");
  const DType t = value->dtype;
  return Call(t, kShuffleXor, {std::move(value), IntImm(lane_offset)});
}
bool IsShuffleXor(const CallNode* c) { return c && c->name == kShuffleXor && c->args.size() == 2; }
Expr Reduce(ReduceOp op, Expr source, std::vector<Var> axis, std::vector<Expr> extents) {
  AUTOTUNE_CHECK(source, "reduce source is null");
  AUTOTUNE_CHECK(axis.size() == extents.size() && !axis.empty(), "reduce needs one extent per axis");
  DType t = source->dtype;
  return std::make_shared<ReduceNode>(t, op, std::move(source), std::move(axis), std::move(extents));
}

Expr ZeroOf(DType t) { return IsHalf(t) ? Cast(t, FloatImm(0.0)) : FloatImm(0.0, t); }

Expr ReduceIdentity(ReduceOp op, DType t) {
  if (IsFloat(t)) {
    switch (op) {
      case ReduceOp::kSum: return FloatImm(0.0, t);
      case ReduceOp::kMax: return FloatImm(-std::numeric_limits<double>::infinity(), t);
      case ReduceOp::kMin: return FloatImm(std::numeric_limits<double>::infinity(), t);
    }
  }
  int64_t lo = t == DType::kInt32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
  int64_t hi = t == DType::kInt32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
  switch (op) {
    case ReduceOp::kSum: return IntImm(0, t);
    case ReduceOp::kMax: return IntImm(lo, t);
    case ReduceOp::kMin: return IntImm(hi, t);
  }
  return nullptr;
}

}  // namespace autotune::tir
