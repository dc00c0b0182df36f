#include "tir/codegen/c_vectors.h"

#include <fmt/format.h>

#include <vector>

#include "tir/analysis/expr_uses.h"
#include "tir/structural_equal.h"
#include "tir/transform/linear_form.h"

namespace autotune::tir {
namespace {

bool Uses(const Expr& e, const VarNode* var) {
  for (const VarNode* v : VarsIn(e)) {
    if (v == var) return true;
  }
  return false;
}

// Whether a flat index moves by exactly one element per step of `var` (var's own term, coefficient 1,
// and no other term that involves var).
bool ContiguousAlong(const std::vector<Expr>& indices, const VarNode* var) {
  if (indices.size() != 1) return false;
  const LinearSum sum = ToLinear(indices[0]);
  if (!sum.ok) return false;
  int unit_terms = 0;
  for (const auto& t : sum.terms) {
    if (t.expr.get() == var && t.coeff == 1) {
      ++unit_terms;
    } else if (Uses(t.expr, var)) {
      return false;
    }
  }
  return unit_terms == 1;
}

bool IsVectorOp(BinaryOp op) {
  return op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kMul || op == BinaryOp::kDiv;
}

// The stores of a chunked loop's body (empty when the body is anything else).
std::vector<const BufferStoreNode*> BodyStores(const Stmt& body) {
  std::vector<const BufferStoreNode*> stores;
  if (const auto* store = As<BufferStoreNode>(body)) {
    stores.push_back(store);
  } else if (const auto* seq = As<SeqNode>(body)) {
    for (const auto& s : seq->stmts) {
      const auto* st = As<BufferStoreNode>(s);
      if (!st) return {};
      stores.push_back(st);
    }
  }
  return stores;
}

class ChunkCheck {
 public:
  ChunkCheck(const VarNode* var, const std::vector<const BufferStoreNode*>& stores) : var_(var), stores_(stores) {}

  bool Ok() {
    for (size_t i = 0; i < stores_.size(); ++i) {
      const BufferStoreNode* s = stores_[i];
      if (s->buffer->dtype != DType::kFloat32 || !ContiguousAlong(s->indices, var_)) return false;
      for (size_t j = 0; j < i; ++j) {
        if (stores_[j]->buffer == s->buffer) return false;  // two stores of a buffer could overlap across lanes
      }
      if (!Value(s->value)) return false;
    }
    return true;
  }

 private:
  // A lane reads what another lane writes only through a buffer stored in the loop: such reads must be
  // of the very element the lane stores.
  bool LoadOk(const BufferLoadNode* load) const {
    if (load->dtype != DType::kFloat32 || !ContiguousAlong(load->indices, var_)) return false;
    for (const BufferStoreNode* s : stores_) {
      if (s->buffer == load->buffer && !StructuralEqual(s->indices[0], load->indices[0])) return false;
    }
    return true;
  }

  bool Value(const Expr& e) const {
    if (e->dtype != DType::kFloat32) return false;
    if (!Uses(e, var_)) {  // broadcast; a stored buffer must not be read at a lane-invariant place
      for (const BufferLoadNode* load : LoadsIn(e)) {
        for (const BufferStoreNode* s : stores_) {
          if (s->buffer == load->buffer) return false;
        }
      }
      return true;
    }
    if (const auto* load = As<BufferLoadNode>(e)) return LoadOk(load);
    if (const auto* bin = As<BinaryNode>(e)) return IsVectorOp(bin->op) && Value(bin->a) && Value(bin->b);
    return false;
  }

  const VarNode* var_;
  const std::vector<const BufferStoreNode*>& stores_;
};

const char* InfixOf(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    default: return "/";
  }
}

}  // namespace

std::optional<int> VectorChunkLanes(const ForNode* loop, int max_lanes) {
  const int64_t* extent = AsConstInt(loop->extent);
  if (loop->for_kind != ForKind::kVectorized || !extent || *extent <= 0 || *extent % 8 != 0) return std::nullopt;
  const auto stores = BodyStores(loop->body);
  if (stores.empty() || !ChunkCheck(loop->var.get(), stores).Ok()) return std::nullopt;
  return std::min(*extent % 16 == 0 ? 16 : 8, max_lanes);
}

int64_t ChunksInNest(const ForNode* loop, int max_lanes) {
  const int64_t* extent = AsConstInt(loop->extent);
  if (!extent || *extent <= 0) return 0;
  if (auto lanes = VectorChunkLanes(loop, max_lanes)) return *extent / *lanes;
  if (loop->for_kind != ForKind::kSerial && loop->for_kind != ForKind::kUnrolled) return 0;
  const auto* inner = As<ForNode>(loop->body);
  const int64_t chunks = inner ? ChunksInNest(inner, max_lanes) : 0;
  return chunks > 0 && chunks <= kMaxUnrolledChunks ? chunks * *extent : 0;  // past the cap: no unrolled nest
}

bool UnrollsForChunks(const ForNode* loop, int max_lanes) {
  const int64_t chunks = ChunksInNest(loop, max_lanes);
  return chunks > 0 && chunks <= kMaxUnrolledChunks;
}

std::string VectorValue(CFamilyPrinter& p, const Expr& e, const VarNode* var, int lanes) {
  if (!Uses(e, var)) return fmt::format("at_splat_f32x{}({})", lanes, p.EmitExpr(e).text);
  if (As<BufferLoadNode>(e)) return fmt::format("at_load_f32x{}(&{})", lanes, p.EmitExpr(e).text);
  const auto* bin = As<BinaryNode>(e);
  return fmt::format("({} {} {})", VectorValue(p, bin->a, var, lanes), InfixOf(bin->op),
                     VectorValue(p, bin->b, var, lanes));
}

CHelper VectorHelper(int lanes) {
  return lanes == 16 ? CHelper::kVecF32x16 : lanes == 8 ? CHelper::kVecF32x8 : CHelper::kVecF32x4;
}

std::string VectorHelperText(int lanes) {
  // Loads and stores through an unaligned, may_alias vector type: any alignment, no aliasing
  // questions. (Through memcpy, GCC 12 shuffled a gemm's 16 accumulators between registers every
  // step: 20% slower.) x - 0 broadcasts and keeps a -0.
  return fmt::format(
      "typedef float at_f32x{0} __attribute__((vector_size({1})));\n"
      "typedef float at_f32x{0}_u __attribute__((vector_size({1}), aligned(4), may_alias));\n"
      "static inline at_f32x{0} at_load_f32x{0}(const float* p) {{ return *(const at_f32x{0}_u*)p; }}\n"
      "static inline void at_store_f32x{0}(float* p, at_f32x{0} v) {{ *(at_f32x{0}_u*)p = v; }}\n"
      "static inline at_f32x{0} at_splat_f32x{0}(float x) {{ return x - (at_f32x{0}){{0}}; }}\n",
      lanes, lanes * 4);
}

}  // namespace autotune::tir
