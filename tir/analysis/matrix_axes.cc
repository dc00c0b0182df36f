#include "tir/analysis/matrix_axes.h"

#include <fmt/format.h>

#include <algorithm>

#include "tir/analysis/expr_uses.h"
#include "tir/analysis/tensor_intrinsics.h"

namespace autotune::tir {
namespace {

bool Reads(const BufferLoadNode* load, const Var& v) {
  for (const Expr& e : load->indices) {
    for (const VarNode* u : VarsIn(e)) {
      if (u == v.get()) return true;
    }
  }
  return false;
}

// Every index a single iterator (a weight's or a matrix's access), not a sum or quotient of them.
bool ReadAtPlainIterators(const BufferLoadNode* load) {
  return std::all_of(load->indices.begin(), load->indices.end(), [](const Expr& e) { return As<VarNode>(e) != nullptr; });
}

bool IndexIs(const Expr& e, const te::IterVar& iv) { return e.get() == iv.var.get(); }

}  // namespace

int64_t MatrixAxes::Extent(const te::OperationNode& op, const std::vector<int>& group, bool reduce) {
  int64_t e = 1;
  for (int i : group) e *= (reduce ? op.reduce_axis : op.axis)[i].extent;
  return e;
}

bool MatrixAxes::IsPlain(const te::OperationNode& op) const {
  const size_t rank = op.axis.size();
  if (rank < 2 || m != std::vector<int>{static_cast<int>(rank) - 2} || n != std::vector<int>{static_cast<int>(rank) - 1} ||
      k.size() != 1 || batch.size() != rank - 2 || a->indices.size() != rank || b->indices.size() != rank) {
    return false;
  }
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (batch[i] != static_cast<int>(i) || !IndexIs(a->indices[i], op.axis[i]) || !IndexIs(b->indices[i], op.axis[i])) {
      return false;
    }
  }
  const te::IterVar& kv = op.reduce_axis[k[0]];
  return IndexIs(a->indices[rank - 2], op.axis[m[0]]) && IndexIs(a->indices[rank - 1], kv) &&
         IndexIs(b->indices[rank - 2], kv) && IndexIs(b->indices[rank - 1], op.axis[n[0]]);
}

Result<MatrixAxes> FindMatrixAxes(const te::OperationNode& op) {
  const auto* sum = As<ReduceNode>(op.body);
  if (!sum || sum->combiner != ReduceOp::kSum) return MakeError(fmt::format("{} is not a sum", op.name));
  const std::optional<ProductForm> product = MatchProduct(sum->source);
  if (!product) return MakeError(fmt::format("{} does not sum products of two loads", op.name));
  MatrixAxes axes;
  axes.a = product->a;
  axes.b = product->b;
  axes.precision = product->precision;
  // The weights (read at plain iterators) are A where the other operand is a window or a gather.
  if (!ReadAtPlainIterators(axes.a) && ReadAtPlainIterators(axes.b)) std::swap(axes.a, axes.b);
  for (size_t i = 0; i < op.axis.size(); ++i) {
    const bool in_a = Reads(axes.a, op.axis[i].var), in_b = Reads(axes.b, op.axis[i].var);
    if (!in_a && !in_b) return MakeError(fmt::format("{}: neither operand reads axis {}", op.name, op.axis[i].var->name));
    (in_a && in_b ? axes.batch : in_a ? axes.m : axes.n).push_back(static_cast<int>(i));
  }
  for (size_t i = 0; i < op.reduce_axis.size(); ++i) {
    const Var& v = op.reduce_axis[i].var;
    if (!Reads(axes.a, v) || !Reads(axes.b, v)) {
      return MakeError(fmt::format("{}: one operand alone reads reduction axis {}", op.name, v->name));
    }
    axes.k.push_back(static_cast<int>(i));
  }
  if (axes.m.empty() || axes.n.empty() || axes.k.empty()) {
    return MakeError(fmt::format("{} has no rows, columns or reduction of a matrix product", op.name));
  }
  return axes;
}

}  // namespace autotune::tir
