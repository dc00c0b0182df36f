#include "tir/codegen/codegen_c.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tir/analysis/int_bound.h"
#include "tir/functor.h"
#include "tir/transform/serialize_threads.h"

namespace autotune::tir {
namespace {

// Arrays up to this size live on the stack (fast, and private to an OpenMP thread); larger ones on the
// heap, so that serialized shared memory or big scratch buffers cannot overflow a worker's stack.
constexpr int64_t kStackBytes = 64 * 1024;
constexpr int kAlign = 64;  // cache line and AVX-512 vector

// C operator precedence levels (higher binds tighter).
enum Prec : int {
  kPrecCond = 3, kPrecOr = 4, kPrecAnd = 5, kPrecBitAnd = 8, kPrecEq = 9, kPrecRel = 10, kPrecShift = 11,
  kPrecAdd = 12, kPrecMul = 13, kPrecUnary = 15, kPrecPrimary = 16,
};

struct CExpr {
  std::string text;
  int prec;
};

// Small helpers emitted on demand, in this order, in front of the entry function.
enum class Helper : int {
  kFloorDivI32, kFloorModI32, kFloorDivI64, kFloorModI64,
  kMinI32, kMaxI32, kMinI64, kMaxI64, kMinF32, kMaxF32, kMinF64, kMaxF64,
  kSigmoidF32, kSigmoidF64, kRsqrtF32, kRsqrtF64, kAlloc,
};

const char* CType(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt32: return "int32_t";
    case DType::kInt64: return "int64_t";
    case DType::kFloat32: return "float";
    case DType::kFloat64: return "double";
  }
  return "?";
}

// Suffix of helper names per dtype.
const char* Suffix(DType t) {
  switch (t) {
    case DType::kInt32: return "i32";
    case DType::kInt64: return "i64";
    case DType::kFloat32: return "f32";
    case DType::kFloat64: return "f64";
    default: return "b";
  }
}

std::string HelperText(Helper h) {
  auto floordiv = [](const char* ty, const char* sfx) {
    // C division truncates towards zero; correct the quotient when the signs differ.
    return fmt::format(
        "static inline {0} at_floordiv_{1}({0} a, {0} b) {{\n"
        "  {0} q = a / b;\n"
        "  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
        "}}\n",
        ty, sfx);
  };
  auto floormod = [](const char* ty, const char* sfx) {
    return fmt::format(
        "static inline {0} at_floormod_{1}({0} a, {0} b) {{\n"
        "  {0} r = a % b;\n"
        "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
        "}}\n",
        ty, sfx);
  };
  // `a < b ? a : b` (not fminf) so that the compiler vectorizes it to min/max instructions.
  auto minmax = [](const char* name, const char* op, const char* ty, const char* sfx) {
    return fmt::format("static inline {2} at_{0}_{3}({2} a, {2} b) {{ return a {1} b ? a : b; }}\n", name, op, ty,
                       sfx);
  };
  switch (h) {
    case Helper::kFloorDivI32: return floordiv("int32_t", "i32");
    case Helper::kFloorModI32: return floormod("int32_t", "i32");
    case Helper::kFloorDivI64: return floordiv("int64_t", "i64");
    case Helper::kFloorModI64: return floormod("int64_t", "i64");
    case Helper::kMinI32: return minmax("min", "<", "int32_t", "i32");
    case Helper::kMaxI32: return minmax("max", ">", "int32_t", "i32");
    case Helper::kMinI64: return minmax("min", "<", "int64_t", "i64");
    case Helper::kMaxI64: return minmax("max", ">", "int64_t", "i64");
    case Helper::kMinF32: return minmax("min", "<", "float", "f32");
    case Helper::kMaxF32: return minmax("max", ">", "float", "f32");
    case Helper::kMinF64: return minmax("min", "<", "double", "f64");
    case Helper::kMaxF64: return minmax("max", ">", "double", "f64");
    case Helper::kSigmoidF32:
      return "static inline float at_sigmoid_f32(float x) { return 1.0f / (1.0f + expf(-x)); }\n";
    case Helper::kSigmoidF64:
      return "static inline double at_sigmoid_f64(double x) { return 1.0 / (1.0 + exp(-x)); }\n";
    case Helper::kRsqrtF32: return "static inline float at_rsqrt_f32(float x) { return 1.0f / sqrtf(x); }\n";
    case Helper::kRsqrtF64: return "static inline double at_rsqrt_f64(double x) { return 1.0 / sqrt(x); }\n";
    case Helper::kAlloc:
      // aligned_alloc wants a size that is a multiple of the alignment. Out of memory is a crash the
      // runner reports (RUN_ERROR), not a silently unwritten output.
      return fmt::format(
          "static void* at_alloc(size_t bytes) {{\n"
          "  void* p = aligned_alloc({0}, (bytes + {1}) / {0} * {0});\n"
          "  if (!p) abort();\n"
          "  return p;\n"
          "}}\n",
          kAlign, kAlign - 1);
  }
  return "";
}

struct Intrinsic {
  const char* f32;  // C function for float (nullptr: helper)
  const char* f64;
  int arity;
  Helper helper32, helper64;
  bool has_helper;
};

const std::map<std::string, Intrinsic>& Intrinsics() {
  static const std::map<std::string, Intrinsic> table = [] {
    std::map<std::string, Intrinsic> t;
    auto fn = [&](const char* name, const char* f32, const char* f64, int arity) {
      t[name] = Intrinsic{f32, f64, arity, Helper::kAlloc, Helper::kAlloc, false};
    };
    fn("exp", "expf", "exp", 1);
    fn("exp2", "exp2f", "exp2", 1);
    fn("log", "logf", "log", 1);
    fn("log2", "log2f", "log2", 1);
    fn("log10", "log10f", "log10", 1);
    fn("sqrt", "sqrtf", "sqrt", 1);
    fn("fabs", "fabsf", "fabs", 1);
    fn("abs", "fabsf", "fabs", 1);
    fn("tanh", "tanhf", "tanh", 1);
    fn("sin", "sinf", "sin", 1);
    fn("cos", "cosf", "cos", 1);
    fn("tan", "tanf", "tan", 1);
    fn("erf", "erff", "erf", 1);
    fn("floor", "floorf", "floor", 1);
    fn("ceil", "ceilf", "ceil", 1);
    fn("round", "roundf", "round", 1);
    fn("trunc", "truncf", "trunc", 1);
    fn("pow", "powf", "pow", 2);
    fn("fma", "fmaf", "fma", 3);
    t["sigmoid"] = Intrinsic{nullptr, nullptr, 1, Helper::kSigmoidF32, Helper::kSigmoidF64, true};
    t["rsqrt"] = Intrinsic{nullptr, nullptr, 1, Helper::kRsqrtF32, Helper::kRsqrtF64, true};
    return t;
  }();
  return table;
}

// Names the generated code must not take: C keywords and the library names it calls.
const std::set<std::string>& ReservedNames() {
  static const std::set<std::string> names = [] {
    std::set<std::string> s = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
        "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
        "volatile", "while", "bool", "true", "false", "int32_t", "int64_t", "size_t", "abort", "free",
        "aligned_alloc", "main", "NAN", "INFINITY", "llabs",
    };
    for (const auto& [name, in] : Intrinsics()) {
      s.insert(name);
      if (in.f32) s.insert(in.f32);
      if (in.f64) s.insert(in.f64);
    }
    return s;
  }();
  return names;
}

// Whether every store in a loop body writes a location that depends on the loop variable. Only then
// is `omp simd` safe: a store to one location from all iterations (a vectorized reduction axis) would
// be a lane race, so such loops are left to the auto-vectorizer, which proves safety itself.
class SimdSafety : public IRVisitor {
 public:
  explicit SimdSafety(const VarNode* v) : var_(v) {}
  bool safe = true;
  void Visit_(const BufferStoreNode* op) override {
    uses_ = false;
    for (const auto& i : op->indices) Visit(i);
    safe &= uses_;
    Visit(op->value);
  }
  void Visit_(const VarNode* op) override { uses_ |= op == var_; }

 private:
  const VarNode* var_;
  bool uses_ = false;
};

class CEmitter {
 public:
  Result<CSource> Run(const PrimFunc& f) {
    CSource out;
    out.entry = Reserve(f.name);
    std::vector<std::string> params;
    for (const auto& p : f.params) {
      buf_names_[p.get()] = Reserve(p->name);
      params.push_back(fmt::format("{}* restrict {}", CType(p->dtype), buf_names_[p.get()]));
    }
    indent_ = 1;
    EmitStmt(f.body);
    if (!error_.empty()) return MakeError(error_);

    std::ostringstream os;
    os << "// Generated by autotune (C backend). Entry: " << out.entry << ".\n"
       << "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <stdlib.h>\n\n";
    for (Helper h : helpers_) os << HelperText(h);
    if (!helpers_.empty()) os << "\n";
    os << "void " << out.entry << "(";
    for (size_t i = 0; i < params.size(); ++i) os << (i ? ", " : "") << params[i];
    os << ") {\n" << body_.str() << "}\n";
    out.code = os.str();
    return out;
  }

 private:
  // ---- names -------------------------------------------------------------------------------------
  std::string Reserve(const std::string& raw) {
    std::string base;
    for (char c : raw) base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v" + base;
    // Identifiers starting with "at_" are the helpers' namespace.
    if (base.rfind("at_", 0) == 0) base = "v_" + base;
    std::string name = base;
    for (int k = 1; used_.count(name) || ReservedNames().count(name); ++k) name = fmt::format("{}_{}", base, k);
    used_.insert(name);
    return name;
  }
  const std::string& VarName(const VarNode* v) {
    auto it = var_names_.find(v);
    if (it == var_names_.end()) it = var_names_.emplace(v, Reserve(v->name)).first;
    return it->second;
  }
  std::string BufName(const Buffer& b) {
    auto it = buf_names_.find(b.get());
    if (it != buf_names_.end()) return it->second;
    Fail("buffer " + b->name + " is used outside its allocation");
    return "?";
  }

  void Fail(std::string msg) {
    if (error_.empty()) error_ = std::move(msg);
  }
  void Use(Helper h) { helpers_.insert(h); }

  // ---- expressions -------------------------------------------------------------------------------
  static std::string Paren(const CExpr& e, int min_prec) {
    return e.prec >= min_prec ? e.text : "(" + e.text + ")";
  }

  CExpr EmitInt(int64_t v, DType t) {
    if (t == DType::kBool) return {v ? "true" : "false", kPrecPrimary};
    if (t == DType::kInt32) {
      if (v == std::numeric_limits<int32_t>::min()) return {"INT32_MIN", kPrecPrimary};
      return {std::to_string(v), v < 0 ? kPrecUnary : kPrecPrimary};
    }
    if (v == std::numeric_limits<int64_t>::min()) return {"INT64_MIN", kPrecPrimary};
    return {fmt::format("INT64_C({})", v), v < 0 ? kPrecUnary : kPrecPrimary};
  }

  static CExpr EmitFloat(double v, DType t) {
    const bool f32 = t == DType::kFloat32;
    const int prec = f32 ? kPrecPrimary : kPrecUnary;  // the float64 forms are casts
    if (std::isnan(v)) return {f32 ? "NAN" : "(double)NAN", prec};
    if (std::isinf(v)) {
      std::string s = f32 ? "INFINITY" : "(double)INFINITY";
      return v < 0 ? CExpr{"-" + s, kPrecUnary} : CExpr{s, prec};
    }
    // %.9g round-trips every float32, %.17g every float64.
    std::string s = f32 ? fmt::format("{:.9g}", static_cast<float>(v)) : fmt::format("{:.17g}", v);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    if (f32) s += "f";
    return {s, s[0] == '-' ? kPrecUnary : kPrecPrimary};
  }

  CExpr Call2(const std::string& fn, const Expr& a, const Expr& b) {
    return {fmt::format("{}({}, {})", fn, EmitExpr(a).text, EmitExpr(b).text), kPrecPrimary};
  }

  // Left-associative: the right operand needs parentheses at equal precedence (a - (b - c)).
  // Operands of comparisons that are themselves comparisons get parentheses, for the reader.
  CExpr Infix(const char* op, int prec, const Expr& a, const Expr& b) {
    CExpr x = EmitExpr(a), y = EmitExpr(b);
    const bool compare = prec == kPrecEq || prec == kPrecRel;
    return {fmt::format("{} {} {}", Paren(x, compare ? kPrecShift : prec), op, Paren(y, compare ? kPrecShift : prec + 1)),
            prec};
  }

  CExpr EmitBinary(const BinaryNode* op) {
    const DType t = op->a->dtype;
    switch (op->op) {
      case BinaryOp::kAdd: return Infix("+", kPrecAdd, op->a, op->b);
      case BinaryOp::kSub: return Infix("-", kPrecAdd, op->a, op->b);
      case BinaryOp::kMul: return Infix("*", kPrecMul, op->a, op->b);
      case BinaryOp::kDiv: return Infix("/", kPrecMul, op->a, op->b);
      case BinaryOp::kFloorDiv:
      case BinaryOp::kFloorMod: return EmitFloorDivMod(op);
      case BinaryOp::kMin:
      case BinaryOp::kMax: {
        const bool is_min = op->op == BinaryOp::kMin;
        static const std::map<std::pair<DType, bool>, Helper> helpers = {
            {{DType::kInt32, true}, Helper::kMinI32},   {{DType::kInt32, false}, Helper::kMaxI32},
            {{DType::kInt64, true}, Helper::kMinI64},   {{DType::kInt64, false}, Helper::kMaxI64},
            {{DType::kFloat32, true}, Helper::kMinF32}, {{DType::kFloat32, false}, Helper::kMaxF32},
            {{DType::kFloat64, true}, Helper::kMinF64}, {{DType::kFloat64, false}, Helper::kMaxF64},
        };
        auto it = helpers.find({t, is_min});
        if (it == helpers.end()) {
          Fail("min/max of bool");
          return {"0", kPrecPrimary};
        }
        Use(it->second);
        return Call2(fmt::format("at_{}_{}", is_min ? "min" : "max", Suffix(t)), op->a, op->b);
      }
      case BinaryOp::kEQ: return Infix("==", kPrecEq, op->a, op->b);
      case BinaryOp::kNE: return Infix("!=", kPrecEq, op->a, op->b);
      case BinaryOp::kLT: return Infix("<", kPrecRel, op->a, op->b);
      case BinaryOp::kLE: return Infix("<=", kPrecRel, op->a, op->b);
      case BinaryOp::kGT: return Infix(">", kPrecRel, op->a, op->b);
      case BinaryOp::kGE: return Infix(">=", kPrecRel, op->a, op->b);
      case BinaryOp::kAnd:
      case BinaryOp::kOr: {
        // Mixed && and || always get parentheses, for the reader.
        const bool is_and = op->op == BinaryOp::kAnd;
        const int prec = is_and ? kPrecAnd : kPrecOr;
        auto side = [&](const Expr& e, int min_prec) {
          const auto* b = As<BinaryNode>(e);
          const bool other = b && IsLogical(b->op) && b->op != op->op;
          return Paren(EmitExpr(e), other ? kPrecPrimary : min_prec);
        };
        return {fmt::format("{} {} {}", side(op->a, prec), is_and ? "&&" : "||", side(op->b, prec + 1)), prec};
      }
    }
    Fail("unknown binary operator");
    return {"0", kPrecPrimary};
  }

  CExpr EmitFloorDivMod(const BinaryNode* op) {
    const bool is_div = op->op == BinaryOp::kFloorDiv;
    // A positive power-of-two divisor: an arithmetic shift and a mask round towards minus infinity
    // (GCC and Clang define >> on negative values as arithmetic), and are cheaper than the helpers.
    if (const int64_t* c = AsConstInt(op->b); c && *c > 0 && (*c & (*c - 1)) == 0) {
      int shift = 0;
      while ((int64_t{1} << shift) < *c) ++shift;
      CExpr a = EmitExpr(op->a);
      if (is_div) {
        if (shift == 0) return a;
        return {fmt::format("{} >> {}", Paren(a, kPrecUnary), shift), kPrecShift};
      }
      if (shift == 0) return EmitInt(0, op->dtype);
      return {fmt::format("{} & {}", Paren(a, kPrecUnary), EmitInt(*c - 1, op->dtype).text), kPrecBitAnd};
    }
    // A non-negative dividend and a positive divisor: C's truncating / and % are floor division.
    if (const int64_t* c = AsConstInt(op->b); c && *c > 0 && bounds_.Bound(op->a).min >= 0) {
      return Infix(is_div ? "/" : "%", kPrecMul, op->a, op->b);
    }
    const DType t = op->dtype;
    if (t == DType::kInt32) {
      Use(is_div ? Helper::kFloorDivI32 : Helper::kFloorModI32);
    } else {
      Use(is_div ? Helper::kFloorDivI64 : Helper::kFloorModI64);
    }
    return Call2(fmt::format("at_floor{}_{}", is_div ? "div" : "mod", Suffix(t)), op->a, op->b);
  }

  CExpr EmitCall(const CallNode* op) {
    std::vector<std::string> args;
    for (const auto& a : op->args) args.push_back(EmitExpr(a).text);
    std::string fn;
    if (IsInt(op->dtype) && (op->name == "abs" || op->name == "fabs") && args.size() == 1) {
      fn = op->dtype == DType::kInt32 ? "abs" : "llabs";
    } else {
      auto it = Intrinsics().find(op->name);
      if (it == Intrinsics().end() || !IsFloat(op->dtype) || it->second.arity != static_cast<int>(args.size())) {
        Fail(fmt::format("unsupported intrinsic {}/{} of {}", op->name, args.size(), DTypeName(op->dtype)));
        return {"0", kPrecPrimary};
      }
      const Intrinsic& in = it->second;
      const bool f32 = op->dtype == DType::kFloat32;
      if (in.has_helper) {
        Use(f32 ? in.helper32 : in.helper64);
        fn = fmt::format("at_{}_{}", op->name, Suffix(op->dtype));
      } else {
        fn = f32 ? in.f32 : in.f64;
      }
    }
    std::string text = fn + "(";
    for (size_t i = 0; i < args.size(); ++i) text += (i ? ", " : "") + args[i];
    return {text + ")", kPrecPrimary};
  }

  CExpr EmitIndexed(const Buffer& b, const std::vector<Expr>& indices) {
    if (indices.size() != 1) {
      Fail("buffer " + b->name + " is not flattened");
      return {"0", kPrecPrimary};
    }
    return {fmt::format("{}[{}]", BufName(b), EmitExpr(indices[0]).text), kPrecPrimary};
  }

  CExpr EmitExpr(const Expr& e) {
    switch (e->kind) {
      case ExprKind::kIntImm: return EmitInt(As<IntImmNode>(e)->value, e->dtype);
      case ExprKind::kFloatImm: return EmitFloat(As<FloatImmNode>(e)->value, e->dtype);
      case ExprKind::kVar: {
        const auto* v = As<VarNode>(e);
        if (!live_vars_.count(v)) Fail("variable " + v->name + " is used outside its loop");
        return {VarName(v), kPrecPrimary};
      }
      case ExprKind::kBinary: return EmitBinary(As<BinaryNode>(e));
      case ExprKind::kNot: return {"!" + Paren(EmitExpr(As<NotNode>(e)->a), kPrecUnary), kPrecUnary};
      case ExprKind::kSelect: {
        const auto* op = As<SelectNode>(e);
        // C's ?: evaluates one branch only: fine for pure TIR values, and it keeps guarded loads safe.
        return {fmt::format("{} ? {} : {}", Paren(EmitExpr(op->cond), kPrecOr),
                            Paren(EmitExpr(op->true_value), kPrecOr), Paren(EmitExpr(op->false_value), kPrecCond)),
                kPrecCond};
      }
      case ExprKind::kCast: {
        const auto* op = As<CastNode>(e);
        return {fmt::format("({}){}", CType(e->dtype), Paren(EmitExpr(op->value), kPrecUnary)), kPrecUnary};
      }
      case ExprKind::kBufferLoad: {
        const auto* op = As<BufferLoadNode>(e);
        return EmitIndexed(op->buffer, op->indices);
      }
      case ExprKind::kCall: return EmitCall(As<CallNode>(e));
      case ExprKind::kReduce: Fail("Reduce node in lowered TIR"); return {"0", kPrecPrimary};
    }
    Fail("unknown expression");
    return {"0", kPrecPrimary};
  }

  // ---- statements --------------------------------------------------------------------------------
  void Line(const std::string& s) { body_ << std::string(2 * indent_, ' ') << s << '\n'; }

  void EmitFor(const ForNode* op) {
    if (op->for_kind == ForKind::kThreadBinding) {
      Fail("thread-bound loop left after serialization");
      return;
    }
    const std::string& v = VarName(op->var.get());
    const std::string begin = EmitExpr(op->min).text;
    const Expr end = IsConstInt(op->min, 0) ? op->extent : Add(op->min, Cast(op->min->dtype, op->extent));
    const std::string end_text = Paren(EmitExpr(end), kPrecRel + 1);

    bool opened_parallel = false, opened_simd = false;
    switch (op->for_kind) {
      case ForKind::kParallel:
        // Nested parallel loops (and parallel loops inside simd regions) run serially.
        if (!in_parallel_ && !in_simd_) {
          Line("#pragma omp parallel for");
          opened_parallel = in_parallel_ = true;
        }
        break;
      case ForKind::kVectorized: {
        SimdSafety safety(op->var.get());
        safety.Visit(op->body);
        if (!in_simd_ && safety.safe) {
          Line("#pragma omp simd");
          opened_simd = in_simd_ = true;
        }
        break;
      }
      case ForKind::kUnrolled:
        if (const int64_t* n = AsConstInt(op->extent); n && *n > 1) {
          Line(fmt::format("#pragma GCC unroll {}", std::min<int64_t>(*n, 65534)));
        }
        break;
      default: break;
    }
    Line(fmt::format("for ({} {} = {}; {} < {}; ++{}) {{", CType(op->var->dtype), v, begin, v, end_text, v));
    const int64_t* min = AsConstInt(op->min);
    const int64_t* extent = AsConstInt(op->extent);
    if (min && extent) bounds_.Bind(op->var, *min, *extent);
    live_vars_.insert(op->var.get());
    ++indent_;
    EmitStmt(op->body);
    --indent_;
    live_vars_.erase(op->var.get());
    bounds_.Unbind(op->var);
    Line("}");
    if (opened_parallel) in_parallel_ = false;
    if (opened_simd) in_simd_ = false;
  }

  void EmitAllocate(const AllocateNode* op) {
    const Buffer& b = op->buffer;
    const int64_t* n = b->shape.size() == 1 ? AsConstInt(b->shape[0]) : nullptr;
    if (!n || *n <= 0) {
      Fail("allocation of " + b->name + " is not flat with a positive constant size");
      return;
    }
    // Each allocation gets its own C name, so one buffer allocated twice in a scope cannot clash.
    const std::string name = Reserve(b->name);
    auto saved = buf_names_.find(b.get()) == buf_names_.end() ? std::optional<std::string>()
                                                               : std::optional<std::string>(buf_names_[b.get()]);
    buf_names_[b.get()] = name;
    const int64_t bytes = *n * BytesOf(b->dtype);
    const bool heap = bytes > kStackBytes;
    if (heap) {
      Use(Helper::kAlloc);
      Line(fmt::format("{0}* restrict {1} = ({0}*)at_alloc({2});  // {3}", CType(b->dtype), name, bytes,
                       ScopeName(b->scope)));
    } else {
      Line(fmt::format("_Alignas({}) {} {}[{}];  // {}", kAlign, CType(b->dtype), name, *n, ScopeName(b->scope)));
    }
    EmitStmt(op->body);
    if (heap) Line(fmt::format("free({});", name));
    if (saved) {
      buf_names_[b.get()] = *saved;
    } else {
      buf_names_.erase(b.get());
    }
  }

  void EmitStmt(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::kFor: return EmitFor(As<ForNode>(s));
      case StmtKind::kBufferStore: {
        const auto* op = As<BufferStoreNode>(s);
        Line(fmt::format("{} = {};", EmitIndexed(op->buffer, op->indices).text, EmitExpr(op->value).text));
        return;
      }
      case StmtKind::kAllocate: return EmitAllocate(As<AllocateNode>(s));
      case StmtKind::kIfThenElse: {
        const auto* op = As<IfThenElseNode>(s);
        Line(fmt::format("if ({}) {{", EmitExpr(op->cond).text));
        ++indent_;
        EmitStmt(op->then_case);
        --indent_;
        if (op->else_case) {
          Line("} else {");
          ++indent_;
          EmitStmt(op->else_case);
          --indent_;
        }
        Line("}");
        return;
      }
      case StmtKind::kSeq:
        for (const auto& st : As<SeqNode>(s)->stmts) EmitStmt(st);
        return;
      case StmtKind::kBarrier: Fail("barrier left after serialization"); return;
    }
  }

  std::ostringstream body_;
  int indent_ = 0;
  bool in_parallel_ = false, in_simd_ = false;
  std::unordered_set<const VarNode*> live_vars_;  // loop variables in scope
  BoundAnalyzer bounds_;  // ranges of the enclosing loop variables, to emit cheaper integer division
  std::set<std::string> used_;
  std::unordered_map<const VarNode*, std::string> var_names_;
  std::unordered_map<const BufferNode*, std::string> buf_names_;
  std::set<Helper> helpers_;
  std::string error_;
};

}  // namespace

Result<CSource> CodegenC(const PrimFunc& f) {
  PrimFunc func = f;
  if (NeedsThreadSerialization(func.body)) {
    auto serial = SerializeThreads(func.body);
    if (!serial) return serial.error();
    func.body = std::move(serial.value());
  }
  return CEmitter().Run(func);
}

}  // namespace autotune::tir
