#include "tir/codegen/c_family.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "tir/codegen/c_vectors.h"

namespace autotune::tir {
namespace {

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

struct Intrinsic {
  const char* f32;  // function for float (nullptr: helper)
  const char* f64;
  int arity;
  CHelper helper32, helper64;
  bool has_helper;
};

const std::map<std::string, Intrinsic>& Intrinsics() {
  static const std::map<std::string, Intrinsic> table = [] {
    std::map<std::string, Intrinsic> t;
    auto fn = [&](const char* name, const char* f32, const char* f64, int arity) {
      t[name] = Intrinsic{f32, f64, arity, CHelper::kAlloc, CHelper::kAlloc, false};
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
    t["sigmoid"] = Intrinsic{nullptr, nullptr, 1, CHelper::kSigmoidF32, CHelper::kSigmoidF64, true};
    t["rsqrt"] = Intrinsic{nullptr, nullptr, 1, CHelper::kRsqrtF32, CHelper::kRsqrtF64, true};
    t["round_tf32"] = Intrinsic{nullptr, nullptr, 1, CHelper::kRoundTF32, CHelper::kRoundTF32, true};  // float32 only
    return t;
  }();
  return table;
}

std::set<std::string> CReservedNames() {
  std::set<std::string> s = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
      "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
      "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
      "volatile", "while", "bool", "true", "false", "int32_t", "int64_t", "size_t", "abort", "free",
      "aligned_alloc", "main", "NAN", "INFINITY", "llabs", "uint16_t", "uint32_t",
  };
  for (const auto& [name, in] : Intrinsics()) {
    s.insert(name);
    if (in.f32) s.insert(in.f32);
    if (in.f64) s.insert(in.f64);
  }
  return s;
}

}  // namespace

const std::set<std::string>& CFamilyPrinter::ReservedNames() const {
  // Names the generated code must not take: keywords and the library names it calls.
  static const std::set<std::string> c_names = CReservedNames();
  static const std::set<std::string> cuda_names = [] {
    std::set<std::string> s = CReservedNames();
    for (const char* n : {
             // C++ keywords and literals
             "alignas", "alignof", "asm", "catch", "class", "const_cast", "constexpr", "decltype", "delete",
             "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace", "new", "noexcept",
             "nullptr", "operator", "private", "protected", "public", "reinterpret_cast", "static_assert",
             "static_cast", "template", "this", "thread_local", "throw", "try", "typeid", "typename", "using",
             "virtual", "wchar_t", "char16_t", "char32_t", "concept", "requires",
             // CUDA built-ins and the names generated code uses
             "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "__syncthreads", "float2", "float4",
             "make_float2", "make_float4", "min", "max", "fminf", "fmaxf", "fmin", "fmax", "rsqrtf", "rsqrt",
             "__int_as_float", "__longlong_as_double", "abs", "__uint_as_float", "__float_as_uint"}) {
      s.insert(n);
    }
    return s;
  }();
  return lang_ == CLanguage::kC ? c_names : cuda_names;
}

const char* CFamilyPrinter::TypeName(DType t) const {
  const bool c = lang_ == CLanguage::kC;
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt32: return c ? "int32_t" : "int";
    case DType::kInt64: return c ? "int64_t" : "long long";
    case DType::kFloat32: return "float";
    case DType::kFloat64: return "double";
    case DType::kFloat16:
    case DType::kBFloat16: return c ? "uint16_t" : "unsigned short";  // the bits (support/half.h)
  }
  return "?";
}

// ---- helper texts --------------------------------------------------------------------------------
// Each helper's definition; `fn` is how the language declares a helper ("static inline" or
// "__device__ __forceinline__").

namespace {

// C division truncates towards zero; the quotient is corrected when the signs differ.
std::string FloorDivText(const char* fn, const char* type, const char* suffix) {
  return fmt::format(
      "{2} {0} at_floordiv_{1}({0} a, {0} b) {{\n"
      "  {0} q = a / b;\n"
      "  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
      "}}\n",
      type, suffix, fn);
}

std::string FloorModText(const char* fn, const char* type, const char* suffix) {
  return fmt::format(
      "{2} {0} at_floormod_{1}({0} a, {0} b) {{\n"
      "  {0} r = a % b;\n"
      "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
      "}}\n",
      type, suffix, fn);
}

// `a < b ? a : b` (not fminf) so that the compiler vectorizes it to min/max instructions.
std::string MinMaxText(const char* fn, const char* name, const char* op, const char* type, const char* suffix) {
  return fmt::format("{4} {2} at_{0}_{3}({2} a, {2} b) {{ return a {1} b ? a : b; }}\n", name, op, type, suffix, fn);
}

// An asynchronous global -> shared copy of `bytes` (4, 8 or 16; sm_80+, a plain copy before): 16
// bytes bypass L1 (.cg), smaller copies can only go through it (.ca).
std::string CpAsyncText(const char* fn, int bytes) {
  const char* type = bytes == 4 ? "float" : bytes == 8 ? "float2" : "float4";
  return fmt::format(
      "{0} void at_cp_async_{1}(float* dst, const float* src) {{\n"
      "#if __CUDA_ARCH__ >= 800\n"
      "  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));\n"
      "  asm volatile(\"cp.async.{2}.shared.global [%0], [%1], {1};\\n\" :: \"r\"(s), \"l\"(src) : \"memory\");\n"
      "#else\n"
      "  *reinterpret_cast<{3}*>(dst) = *reinterpret_cast<const {3}*>(src);\n"
      "#endif\n"
      "}}\n",
      fn, bytes, bytes == 16 ? "cg" : "ca", type);
}

// One float of base[index] when `valid`, else a zero, asynchronously (cp.async reads src-size bytes
// and zero-fills the rest of the 4; an invalid index is never read, nor formed).
std::string CpAsyncOrZeroText(const char* fn) {
  return fmt::format(
      "{} void at_cp_async_4_or_zero(float* dst, const float* base, long long index, bool valid) {{\n"
      "#if __CUDA_ARCH__ >= 800\n"
      "  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));\n"
      "  const float* src = base + (valid ? index : 0);\n"
      "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4, %2;\\n\" :: \"r\"(s), \"l\"(src), \"r\"(valid ? 4 : 0) : \"memory\");\n"
      "#else\n"
      "  *dst = valid ? base[index] : 0.0f;\n"
      "#endif\n"
      "}}\n",
      fn);
}

// 16 bytes copied from src when `valid`, else 16 zero bytes written, asynchronously (cp.async's
// source size: nothing is read where it is 0; the caller passes a valid address either way).
std::string CpAsync16OrZeroText(const char* fn) {
  return fmt::format(
      "{} void at_cp_async_16_or_zero(void* dst, const void* src, bool valid) {{\n"
      "#if __CUDA_ARCH__ >= 800\n"
      "  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));\n"
      "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\\n\" :: \"r\"(s), \"l\"(src), \"r\"(valid ? 16 : 0) : \"memory\");\n"
      "#else\n"
      "  *reinterpret_cast<uint4*>(dst) = valid ? *reinterpret_cast<const uint4*>(src) : uint4{{}};\n"
      "#endif\n"
      "}}\n",
      fn);
}

// Closes this thread's group of asynchronous copies and waits until at most N groups are in flight.
std::string CpAsyncWaitText(const char* fn) {
  return fmt::format(
      "template <int N>\n"
      "{} void at_cp_async_wait() {{\n"
      "#if __CUDA_ARCH__ >= 800\n"
      "  asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");\n"
      "  asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(N) : \"memory\");\n"
      "#endif\n"
      "}}\n",
      fn);
}

// One warp-wide mma.sync m16n8k16 with float32 accumulation (sm_80+): d += a * b, each lane passing
// its registers of the three fragments.
std::string MmaText(const char* fn, const char* type) {
  return fmt::format(
      "{0} void at_mma_m16n8k16_{1}(float& d0, float& d1, float& d2, float& d3, unsigned a0, unsigned a1,\n"
      "    unsigned a2, unsigned a3, unsigned b0, unsigned b1) {{\n"
      "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.{1}.{1}.f32 {{%0,%1,%2,%3}}, {{%4,%5,%6,%7}}, \"\n"
      "               \"{{%8,%9}}, {{%0,%1,%2,%3}};\\n\"\n"
      "               : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3)\n"
      "               : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), \"r\"(b1));\n"
      "}}\n",
      fn, type);
}

// One warp-wide mma.sync m16n8k8 of TF32 values (the registers' bits) with float32 accumulation.
std::string MmaTF32Text(const char* fn) {
  return fmt::format(
      "{0} void at_mma_m16n8k8_tf32(float& d0, float& d1, float& d2, float& d3, unsigned a0, unsigned a1,\n"
      "    unsigned a2, unsigned a3, unsigned b0, unsigned b1) {{\n"
      "  asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {{%0,%1,%2,%3}}, {{%4,%5,%6,%7}}, \"\n"
      "               \"{{%8,%9}}, {{%0,%1,%2,%3}};\\n\"\n"
      "               : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3)\n"
      "               : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), \"r\"(b1));\n"
      "}}\n",
      fn);
}

// x rounded to TF32, nearest with ties away from zero (cvt.rna), as a float (round_tf32) or as the
// bits an mma takes. C rounds the bits: half the dropped unit added, the dropped bits cleared.
std::string RoundTF32Text(CLanguage lang, const char* fn, bool bits) {
  if (lang == CLanguage::kCuda) {
    return fmt::format(
        "{0} {1} at_{2}(float x) {{\n"
        "  unsigned r;\n"
        "  asm(\"cvt.rna.tf32.f32 %0, %1;\\n\" : \"=r\"(r) : \"f\"(x));\n"
        "  return {3};\n"
        "}}\n",
        fn, bits ? "unsigned" : "float", bits ? "tf32_bits" : "round_tf32_f32", bits ? "r" : "__uint_as_float(r)");
  }
  return fmt::format(
      "{} float at_round_tf32_f32(float x) {{\n"
      "  union {{ float f; uint32_t u; }} v = {{x}};\n"
      "  if ((v.u & 0x7f800000u) != 0x7f800000u) v.u = (v.u + 0x1000u) & 0xffffe000u;\n"
      "  return v.f;\n"
      "}}\n",
      fn);
}

// ldmatrix: the warp loads 8x8 matrices of 16-bit elements from shared memory, each lane giving the
// address of one row; x4 fills an mma A fragment, x2.trans a B fragment from a row-major [k][n] tile
// (x4.trans two of them side by side).
// ldmatrix of `count` (2 or 4) 8x8 matrices, transposed or not: at_ldmatrix_x4, _x4_trans, _x2, _x2_trans.
std::string LdmatrixText(const char* fn, int count, bool trans) {
  const bool four = count == 4;
  return fmt::format(
      "{0} void at_ldmatrix_{1}({2}, const void* p) {{\n"
      "  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(p));\n"
      "  asm volatile(\"ldmatrix.sync.aligned.m8n8.{3}.shared.b16 {4}, [%{5}];\\n\" : {6} : \"r\"(s) : \"memory\");\n"
      "}}\n",
      fn, fmt::format("x{}{}", count, trans ? "_trans" : ""),
      four ? "unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3" : "unsigned& r0, unsigned& r1",
      fmt::format("x{}{}", count, trans ? ".trans" : ""), four ? "{%0,%1,%2,%3}" : "{%0,%1}", count,
      four ? "\"=r\"(r0), \"=r\"(r1), \"=r\"(r2), \"=r\"(r3)" : "\"=r\"(r0), \"=r\"(r1)");
}

// 16-bit float conversions, bit for bit those of support/half.h and of the GPU's cvt.rn (nearest,
// ties to even, subnormals kept). C computes them on the bits; CUDA uses cvt for float16.
std::string HalfConversionText(CLanguage lang, CHelper h) {
  if (lang == CLanguage::kCuda) {
    switch (h) {
      case CHelper::kF16ToF32:
        return "__device__ __forceinline__ float at_f16_to_f32(unsigned short h) {\n"
               "  float f;\n  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n  return f;\n}\n";
      case CHelper::kF32ToF16:
        return "__device__ __forceinline__ unsigned short at_f32_to_f16(float f) {\n"
               "  unsigned short h;\n  asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n  return h;\n}\n";
      case CHelper::kBF16ToF32:
        return "__device__ __forceinline__ float at_bf16_to_f32(unsigned short b) { return __uint_as_float((unsigned)b << 16); }\n";
      default:
        return "__device__ __forceinline__ unsigned short at_f32_to_bf16(float f) {\n"
               "  const unsigned u = __float_as_uint(f);\n"
               "  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);\n"
               "  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n}\n";
    }
  }
  switch (h) {
    case CHelper::kF16ToF32:
      return "static inline float at_f16_to_f32(uint16_t h) {\n"
             "  union { uint32_t u; float f; } v;\n"
             "  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
             "  if (e == 0) return sign ? -((float)m * 5.9604644775390625e-8f) : (float)m * 5.9604644775390625e-8f;\n"
             "  v.u = e == 0x1f ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112u) << 23) | (m << 13);\n"
             "  return v.f;\n}\n";
    case CHelper::kF32ToF16:
      return "static inline uint16_t at_f32_to_f16(float f) {\n"
             "  union { float f; uint32_t u; } v = {f};\n"
             "  const uint32_t sign = (v.u >> 16) & 0x8000u, ax = v.u & 0x7fffffffu;\n"
             "  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);\n"
             "  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);\n"
             "  if (ax >= 0x38800000u) return (uint16_t)(sign | ((ax + 0xc8000fffu + ((ax >> 13) & 1u)) >> 13));\n"
             "  if (ax < 0x33000000u) return (uint16_t)sign;\n"
             "  const int s = 126 - (int)(ax >> 23);\n"
             "  const uint32_t m = (ax & 0x7fffffu) | 0x800000u, kept = m >> s, rest = m & ((1u << s) - 1u), half = 1u << (s - 1);\n"
             "  return (uint16_t)(sign | (kept + (rest > half || (rest == half && (kept & 1u)))));\n}\n";
    case CHelper::kBF16ToF32:
      return "static inline float at_bf16_to_f32(uint16_t b) {\n"
             "  union { uint32_t u; float f; } v;\n  v.u = (uint32_t)b << 16;\n  return v.f;\n}\n";
    default:
      return "static inline uint16_t at_f32_to_bf16(float f) {\n"
             "  union { float f; uint32_t u; } v = {f};\n"
             "  if ((v.u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((v.u >> 16) | 0x40u);\n"
             "  return (uint16_t)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);\n}\n";
  }
}

// C only. aligned_alloc wants a size that is a multiple of the alignment. Out of memory is a crash
// the runner reports (RUN_ERROR), not a silently unwritten output.
std::string AllocText() {
  constexpr int kAlign = 64;
  return fmt::format(
      "static void* at_alloc(size_t bytes) {{\n"
      "  void* p = aligned_alloc({0}, (bytes + {1}) / {0} * {0});\n"
      "  if (!p) abort();\n"
      "  return p;\n"
      "}}\n",
      kAlign, kAlign - 1);
}

}  // namespace

std::string CFamilyPrinter::HelperText(CHelper h) const {
  const char* fn = lang_ == CLanguage::kC ? "static inline" : "__device__ __forceinline__";
  const char* i32 = TypeName(DType::kInt32);
  const char* i64 = TypeName(DType::kInt64);
  switch (h) {
    case CHelper::kFloorDivI32: return FloorDivText(fn, i32, "i32");
    case CHelper::kFloorModI32: return FloorModText(fn, i32, "i32");
    case CHelper::kFloorDivI64: return FloorDivText(fn, i64, "i64");
    case CHelper::kFloorModI64: return FloorModText(fn, i64, "i64");
    case CHelper::kMinI32: return MinMaxText(fn, "min", "<", i32, "i32");
    case CHelper::kMaxI32: return MinMaxText(fn, "max", ">", i32, "i32");
    case CHelper::kMinI64: return MinMaxText(fn, "min", "<", i64, "i64");
    case CHelper::kMaxI64: return MinMaxText(fn, "max", ">", i64, "i64");
    case CHelper::kMinF32: return MinMaxText(fn, "min", "<", "float", "f32");
    case CHelper::kMaxF32: return MinMaxText(fn, "max", ">", "float", "f32");
    case CHelper::kMinF64: return MinMaxText(fn, "min", "<", "double", "f64");
    case CHelper::kMaxF64: return MinMaxText(fn, "max", ">", "double", "f64");
    case CHelper::kSigmoidF32:
      return fmt::format("{} float at_sigmoid_f32(float x) {{ return 1.0f / (1.0f + expf(-x)); }}\n", fn);
    case CHelper::kSigmoidF64:
      return fmt::format("{} double at_sigmoid_f64(double x) {{ return 1.0 / (1.0 + exp(-x)); }}\n", fn);
    case CHelper::kRsqrtF32: return fmt::format("{} float at_rsqrt_f32(float x) {{ return 1.0f / sqrtf(x); }}\n", fn);
    case CHelper::kRsqrtF64: return fmt::format("{} double at_rsqrt_f64(double x) {{ return 1.0 / sqrt(x); }}\n", fn);
    case CHelper::kCpAsync4: return CpAsyncText(fn, 4);
    case CHelper::kCpAsync8: return CpAsyncText(fn, 8);
    case CHelper::kCpAsync16: return CpAsyncText(fn, 16);
    case CHelper::kCpAsync4OrZero: return CpAsyncOrZeroText(fn);
    case CHelper::kCpAsync16OrZero: return CpAsync16OrZeroText(fn);
    case CHelper::kCpAsyncWait: return CpAsyncWaitText(fn);
    case CHelper::kAlloc: return AllocText();
    case CHelper::kVecF32x16: return VectorHelperText(16);
    case CHelper::kVecF32x8: return VectorHelperText(8);
    case CHelper::kVecF32x4: return VectorHelperText(4);
    case CHelper::kMmaF16: return MmaText(fn, "f16");
    case CHelper::kMmaBF16: return MmaText(fn, "bf16");
    case CHelper::kMmaTF32: return MmaTF32Text(fn);
    case CHelper::kRoundTF32: return RoundTF32Text(lang_, fn, false);
    case CHelper::kTF32Bits: return RoundTF32Text(lang_, fn, true);
    case CHelper::kLdmatrixX4: return LdmatrixText(fn, 4, false);
    case CHelper::kLdmatrixX4Trans: return LdmatrixText(fn, 4, true);
    case CHelper::kLdmatrixX2Trans: return LdmatrixText(fn, 2, true);
    case CHelper::kLdmatrixX2: return LdmatrixText(fn, 2, false);
    case CHelper::kF16ToF32:
    case CHelper::kF32ToF16:
    case CHelper::kBF16ToF32:
    case CHelper::kF32ToBF16: return HalfConversionText(lang_, h);
  }
  return "";
}

std::string CFamilyPrinter::HelperDefinitions() const {
  std::string out;
  for (CHelper h : helpers_) out += HelperText(h);
  return out;
}

// ---- names ---------------------------------------------------------------------------------------

std::string CFamilyPrinter::Reserve(const std::string& raw) {
  std::string base;
  for (char c : raw) base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v" + base;
  // Identifiers starting with "at_" are the helpers' namespace; "__" is the implementation's.
  if (base.rfind("at_", 0) == 0) base = "v_" + base;
  if (lang_ == CLanguage::kCuda && base.rfind("__", 0) == 0) base = "v" + base;
  std::string name = base;
  for (int k = 1; used_.count(name) || ReservedNames().count(name); ++k) name = fmt::format("{}_{}", base, k);
  used_.insert(name);
  return name;
}

const std::string& CFamilyPrinter::VarName(const VarNode* v) {
  auto it = var_names_.find(v);
  if (it == var_names_.end()) it = var_names_.emplace(v, Reserve(v->name)).first;
  return it->second;
}

std::string CFamilyPrinter::BufName(const Buffer& b) {
  auto it = buf_names_.find(b.get());
  if (it != buf_names_.end()) return it->second;
  Fail("buffer " + b->name + " is used outside its allocation");
  return "?";
}

// ---- expressions ---------------------------------------------------------------------------------

CExpr CFamilyPrinter::EmitInt(int64_t v, DType t) const {
  const bool c = lang_ == CLanguage::kC;
  if (t == DType::kBool) return {v ? "true" : "false", kPrecPrimary};
  if (t == DType::kInt32) {
    if (v == std::numeric_limits<int32_t>::min()) return {c ? "INT32_MIN" : "(-2147483647 - 1)", kPrecPrimary};
    return {std::to_string(v), v < 0 ? kPrecUnary : kPrecPrimary};
  }
  if (v == std::numeric_limits<int64_t>::min()) {
    return {c ? "INT64_MIN" : "(-9223372036854775807LL - 1)", kPrecPrimary};
  }
  return {c ? fmt::format("INT64_C({})", v) : fmt::format("{}LL", v), v < 0 ? kPrecUnary : kPrecPrimary};
}

CExpr CFamilyPrinter::EmitFloat(double v, DType t) const {
  const bool f32 = t == DType::kFloat32;
  if (lang_ == CLanguage::kCuda && (std::isnan(v) || std::isinf(v))) {
    // NVRTC has no NAN / INFINITY macros: reinterpret the bit patterns.
    std::string s = f32 ? (std::isnan(v) ? "__int_as_float(0x7fc00000)" : "__int_as_float(0x7f800000)")
                        : (std::isnan(v) ? "__longlong_as_double(0x7ff8000000000000LL)"
                                         : "__longlong_as_double(0x7ff0000000000000LL)");
    return std::isinf(v) && v < 0 ? CExpr{"-" + s, kPrecUnary} : CExpr{s, kPrecPrimary};
  }
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

CExpr CFamilyPrinter::Call2(const std::string& fn, const Expr& a, const Expr& b) {
  return {fmt::format("{}({}, {})", fn, EmitExpr(a).text, EmitExpr(b).text), kPrecPrimary};
}

// Left-associative: the right operand needs parentheses at equal precedence (a - (b - c)).
// Operands of comparisons that are themselves comparisons get parentheses, for the reader.
CExpr CFamilyPrinter::Infix(const char* op, int prec, const Expr& a, const Expr& b) {
  CExpr x = EmitExpr(a), y = EmitExpr(b);
  const bool compare = prec == kPrecEq || prec == kPrecRel;
  return {fmt::format("{} {} {}", Paren(x, compare ? kPrecShift : prec), op, Paren(y, compare ? kPrecShift : prec + 1)),
          prec};
}

CExpr CFamilyPrinter::EmitMinMax(const BinaryNode* op) {
  const DType t = op->a->dtype;
  const bool is_min = op->op == BinaryOp::kMin;
  if (t == DType::kBool) {
    Fail("min/max of bool");
    return {"0", kPrecPrimary};
  }
  if (lang_ == CLanguage::kCuda) {
    const char* fn = t == DType::kFloat32   ? (is_min ? "fminf" : "fmaxf")
                     : t == DType::kFloat64 ? (is_min ? "fmin" : "fmax")
                                            : (is_min ? "min" : "max");
    return Call2(fn, op->a, op->b);
  }
  static const std::map<std::pair<DType, bool>, CHelper> helpers = {
      {{DType::kInt32, true}, CHelper::kMinI32},   {{DType::kInt32, false}, CHelper::kMaxI32},
      {{DType::kInt64, true}, CHelper::kMinI64},   {{DType::kInt64, false}, CHelper::kMaxI64},
      {{DType::kFloat32, true}, CHelper::kMinF32}, {{DType::kFloat32, false}, CHelper::kMaxF32},
      {{DType::kFloat64, true}, CHelper::kMinF64}, {{DType::kFloat64, false}, CHelper::kMaxF64},
  };
  Use(helpers.at({t, is_min}));
  return Call2(fmt::format("at_{}_{}", is_min ? "min" : "max", Suffix(t)), op->a, op->b);
}

CExpr CFamilyPrinter::EmitBinary(const BinaryNode* op) {
  switch (op->op) {
    case BinaryOp::kAdd: return Infix("+", kPrecAdd, op->a, op->b);
    case BinaryOp::kSub: return Infix("-", kPrecAdd, op->a, op->b);
    case BinaryOp::kMul: return Infix("*", kPrecMul, op->a, op->b);
    case BinaryOp::kDiv: return Infix("/", kPrecMul, op->a, op->b);
    case BinaryOp::kFloorDiv:
    case BinaryOp::kFloorMod: return EmitFloorDivMod(op);
    case BinaryOp::kMin:
    case BinaryOp::kMax: return EmitMinMax(op);
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

CExpr CFamilyPrinter::EmitFloorDivMod(const BinaryNode* op) {
  const bool is_div = op->op == BinaryOp::kFloorDiv;
  // A positive power-of-two divisor: an arithmetic shift and a mask round towards minus infinity
  // (GCC, Clang and NVCC define >> on negative values as arithmetic), and are cheaper than helpers.
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
    Use(is_div ? CHelper::kFloorDivI32 : CHelper::kFloorModI32);
  } else {
    Use(is_div ? CHelper::kFloorDivI64 : CHelper::kFloorModI64);
  }
  return Call2(fmt::format("at_floor{}_{}", is_div ? "div" : "mod", Suffix(t)), op->a, op->b);
}

CExpr CFamilyPrinter::EmitShuffleXor(const CallNode*) {
  Fail("warp shuffle outside a CUDA kernel (C code needs SerializeThreads first)");
  return {"0", kPrecPrimary};
}

CExpr CFamilyPrinter::EmitCall(const CallNode* op) {
  if (IsShuffleXor(op)) return EmitShuffleXor(op);
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
    if (lang_ == CLanguage::kCuda && op->name == "rsqrt") {
      fn = f32 ? "rsqrtf" : "rsqrt";  // a CUDA built-in
    } else if (in.has_helper) {
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

CExpr CFamilyPrinter::EmitIndexed(const Buffer& b, const std::vector<Expr>& indices) {
  if (indices.size() != 1) {
    Fail("buffer " + b->name + " is not flattened");
    return {"0", kPrecPrimary};
  }
  return {fmt::format("{}[{}]", BufName(b), EmitExpr(indices[0]).text), kPrecPrimary};
}

CExpr CFamilyPrinter::EmitExpr(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIntImm: return EmitInt(As<IntImmNode>(e)->value, e->dtype);
    case ExprKind::kFloatImm:
      // A 16-bit constant (a folded cast) is its float32 value, rounded as a store would round it.
      if (IsHalf(e->dtype)) return EmitExpr(Cast(e->dtype, FloatImm(As<FloatImmNode>(e)->value)));
      return EmitFloat(As<FloatImmNode>(e)->value, e->dtype);
    case ExprKind::kVar: {
      const auto* v = As<VarNode>(e);
      if (auto it = var_text_.find(v); it != var_text_.end()) return it->second;
      if (!live_vars_.count(v)) Fail("variable " + v->name + " is used outside its loop");
      return {VarName(v), kPrecPrimary};
    }
    case ExprKind::kBinary: return EmitBinary(As<BinaryNode>(e));
    case ExprKind::kNot: return {"!" + Paren(EmitExpr(As<NotNode>(e)->a), kPrecUnary), kPrecUnary};
    case ExprKind::kSelect: {
      const auto* op = As<SelectNode>(e);
      // ?: evaluates one branch only: fine for pure TIR values, and it keeps guarded loads safe.
      return {fmt::format("{} ? {} : {}", Paren(EmitExpr(op->cond), kPrecOr), Paren(EmitExpr(op->true_value), kPrecOr),
                          Paren(EmitExpr(op->false_value), kPrecCond)),
              kPrecCond};
    }
    case ExprKind::kCast: return EmitCast(As<CastNode>(e));
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

// 16-bit floats convert through float32 with the helpers; no other cast touches them.
CExpr CFamilyPrinter::EmitCast(const CastNode* op) {
  const DType to = op->dtype, from = op->value->dtype;
  const CExpr value = EmitExpr(op->value);
  if (IsHalf(from) && to == DType::kFloat32) {
    const bool f16 = from == DType::kFloat16;
    Use(f16 ? CHelper::kF16ToF32 : CHelper::kBF16ToF32);
    return {fmt::format("{}({})", f16 ? "at_f16_to_f32" : "at_bf16_to_f32", value.text), kPrecPrimary};
  }
  if (IsHalf(to) && from == DType::kFloat32) {
    const bool f16 = to == DType::kFloat16;
    Use(f16 ? CHelper::kF32ToF16 : CHelper::kF32ToBF16);
    return {fmt::format("{}({})", f16 ? "at_f32_to_f16" : "at_f32_to_bf16", value.text), kPrecPrimary};
  }
  if (IsHalf(to) || IsHalf(from)) {
    if (to != from) Fail(fmt::format("cast from {} to {}: 16-bit floats convert only to and from float32", DTypeName(from), DTypeName(to)));
    return value;
  }
  return {fmt::format("({}){}", TypeName(to), Paren(value, kPrecUnary)), kPrecUnary};
}

}  // namespace autotune::tir
