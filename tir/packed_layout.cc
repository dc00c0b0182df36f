#include "tir/packed_layout.h"

#include <fmt/format.h>

#include "tir/lower/storage_flatten.h"
#include "tir/prim_func.h"
#include "tir/transform/simplify.h"

namespace autotune::tir {

std::vector<int64_t> PackedShape(const std::vector<int64_t>& shape, const PackedLayout& layout) {
  std::vector<int64_t> packed = shape;
  packed[layout.dim] = (shape[layout.dim] + layout.factor - 1) / layout.factor;
  packed.push_back(layout.factor);
  return packed;
}

std::vector<Expr> PackedIndices(const std::vector<Expr>& indices, const PackedLayout& layout) {
  std::vector<Expr> packed = indices;
  const Expr& i = indices[layout.dim];
  packed[layout.dim] = FloorDiv(i, IntImm(layout.factor, i->dtype));
  packed.push_back(FloorMod(i, IntImm(layout.factor, i->dtype)));
  return packed;
}

int64_t PackedElements(const PackedParam& pack) {
  int64_t n = 1;
  for (const auto& e : pack.packed->shape) n *= *AsConstInt(e);
  return n;
}

PrimFunc PackFunc(const std::string& name, const PackedParam& pack) {
  const PackedLayout& layout = pack.layout;
  const Buffer& packed = pack.packed;
  const size_t rank = packed->shape.size();
  std::vector<Var> vars;
  for (size_t d = 0; d < rank; ++d) vars.push_back(MakeVar(fmt::format("p{}", d)));
  // The source's element at (..., outer * factor + inner, ...), the inner part being the last index.
  std::vector<Expr> src(vars.begin(), vars.end() - 1);
  src[layout.dim] = Add(Mul(vars[layout.dim], IntImm(layout.factor)), vars.back());
  const std::vector<Expr> dst(vars.begin(), vars.end());
  const Expr extent = pack.source->shape[layout.dim];
  Stmt body = IfThenElse(LT(src[layout.dim], extent), Store(packed, Load(pack.source, src), dst),
                         Store(packed, Cast(packed->dtype, FloatImm(0)), dst));
  for (size_t d = rank; d-- > 0;) {
    const ForKind kind = d == 0 ? ForKind::kParallel : d + 1 == rank ? ForKind::kVectorized : ForKind::kSerial;
    body = For(vars[d], IntImm(0), packed->shape[d], kind, body);
  }
  PrimFunc f{name, {pack.source, packed}, Simplify(body), {}};
  return StorageFlatten(f);
}

}  // namespace autotune::tir
