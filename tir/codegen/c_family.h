// Expression printing shared by the C-family code generators: C11 (cpu target, codegen_c) and CUDA
// C++ (codegen_cuda). One printer, with the few differences between the two languages switched on
// `CLanguage`:
//
//                      C                                  CUDA
//   int32 / int64      int32_t / int64_t, INT64_C(v)      int / long long, vLL
//   min / max          at_min_f32 helpers (a < b ? a : b)  fminf / fmaxf, fmin / fmax, min / max
//   rsqrt              at_rsqrt_* helper                  rsqrtf / rsqrt
//   inf / nan          INFINITY / NAN                     __int_as_float(0x7f800000) / ...
//   helpers            static inline                      __device__ __forceinline__
//
// Common to both: precedence-aware infix printing (left-associative; comparisons of comparisons and
// mixed && / || get parentheses for the reader), floordiv/floormod as a shift and a mask for
// power-of-two divisors, plain / and % when the enclosing loop ranges prove the dividend non-negative,
// small floor helpers otherwise; float literals that round-trip (%.9g with an f suffix, %.17g);
// intrinsics by name (exp -> expf, ...); sigmoid as a helper; C-style casts; ?: for select. Names are
// made valid identifiers, unique in the generated unit, avoiding the language's reserved words; the
// "at_" prefix is kept for helpers.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "tir/analysis/int_bound.h"
#include "tir/buffer.h"
#include "tir/expr.h"

namespace autotune::tir {

enum class CLanguage : uint8_t { kC, kCuda };

// C operator precedence levels (higher binds tighter).
enum CPrec : int {
  kPrecCond = 3, kPrecOr = 4, kPrecAnd = 5, kPrecBitAnd = 8, kPrecEq = 9, kPrecRel = 10, kPrecShift = 11,
  kPrecAdd = 12, kPrecMul = 13, kPrecUnary = 15, kPrecPrimary = 16,
};

struct CExpr {
  std::string text;
  int prec;
};

// Small helpers emitted on demand, in this order, in front of the generated functions.
enum class CHelper : int {
  kFloorDivI32, kFloorModI32, kFloorDivI64, kFloorModI64,
  kMinI32, kMaxI32, kMinI64, kMaxI64, kMinF32, kMaxF32, kMinF64, kMaxF64,
  kSigmoidF32, kSigmoidF64, kRsqrtF32, kRsqrtF64, kAlloc,
  kF16ToF32, kF32ToF16, kBF16ToF32, kF32ToBF16,
  kCpAsync4, kCpAsync8, kCpAsync16, kCpAsync4OrZero, kCpAsync16OrZero, kCpAsyncWait,  // CUDA only
  kRoundTF32,
  kVecF32x16, kVecF32x8, kVecF32x4,  // C only: explicit SIMD (c_vectors.h)
  kMmaF16, kMmaBF16, kMmaTF32, kTF32Bits, kLdmatrixX4, kLdmatrixX4Trans, kLdmatrixX2Trans, kLdmatrixX2,  // CUDA only: tensor cores
};

// Prints expressions; code generators derive from it and print statements. The first failure is
// kept (as the error value the generator returns); printing goes on, and its text is discarded.
class CFamilyPrinter {
 public:
  explicit CFamilyPrinter(CLanguage lang) : lang_(lang) {}
  virtual ~CFamilyPrinter() = default;

  CExpr EmitExpr(const Expr& e);
  // The type name of a scalar dtype.
  const char* TypeName(DType t) const;
  static std::string Paren(const CExpr& e, int min_prec) { return e.prec >= min_prec ? e.text : "(" + e.text + ")"; }

  // A fresh identifier made from `raw`.
  std::string Reserve(const std::string& raw);
  // The identifier of a variable (reserved on first use).
  const std::string& VarName(const VarNode* v);
  // The identifier bound to a buffer (a failure when none is).
  std::string BufName(const Buffer& b);

  void Fail(std::string msg) {
    if (error_.empty()) error_ = std::move(msg);
  }
  const std::string& error() const { return error_; }
  void Use(CHelper h) { helpers_.insert(h); }
  // Definitions of the helpers used so far, in CHelper order.
  std::string HelperDefinitions() const;
  bool UsesHelpers() const { return !helpers_.empty(); }

 protected:
  CExpr EmitInt(int64_t v, DType t) const;
  CExpr EmitFloat(double v, DType t) const;
  virtual CExpr EmitIndexed(const Buffer& b, const std::vector<Expr>& indices);
  // A warp shuffle (ShuffleXor): only CUDA has one; C code gets shuffles exchanged through memory.
  virtual CExpr EmitShuffleXor(const CallNode* op);

  CLanguage lang_;
  std::unordered_set<const VarNode*> live_vars_;  // variables in scope
  BoundAnalyzer bounds_;  // ranges of the enclosing loop variables, to emit cheaper integer division
  std::unordered_map<const BufferNode*, std::string> buf_names_;
  // Variables printed as a given text instead of their name (e.g. a lane of a CUDA vector).
  std::unordered_map<const VarNode*, CExpr> var_text_;

 private:
  CExpr Call2(const std::string& fn, const Expr& a, const Expr& b);
  CExpr Infix(const char* op, int prec, const Expr& a, const Expr& b);
  CExpr EmitBinary(const BinaryNode* op);
  CExpr EmitMinMax(const BinaryNode* op);
  CExpr EmitFloorDivMod(const BinaryNode* op);
  CExpr EmitCall(const CallNode* op);
  CExpr EmitCast(const CastNode* op);
  std::string HelperText(CHelper h) const;
  const std::set<std::string>& ReservedNames() const;

  std::set<std::string> used_;
  std::unordered_map<const VarNode*, std::string> var_names_;
  std::set<CHelper> helpers_;
  std::string error_;
};

}  // namespace autotune::tir
