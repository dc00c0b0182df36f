// A contraction seen as a (batched) matrix product: out[b, m, n] = sum_k A[b, m, k] * B[b, k, n].
// Each output iterator the two operands both read is a batch axis, one only A reads a row (M) axis,
// one only B reads a column (N) axis; every reduction iterator must be read by both (K). A
// convolution out[n, k, p, q] = sum_{c, r, s} pad[n, c, p + r, q + s] * w[k, c, r, s] is then
// M = k, N = (n, p, q), K = (c, r, s): the weights are A, the im2col matrix B (implicit GEMM).
// The primitive matrix_form (tir/schedule) rewrites a stage into this form.
#pragma once

#include <vector>

#include "support/result.h"
#include "tir/ops/precision.h"
#include "tir/te/operation.h"

namespace autotune::tir {

struct MatrixAxes {
  const BufferLoadNode* a = nullptr;  // the operand whose rows are M (the one read at plain iterators)
  const BufferLoadNode* b = nullptr;
  Precision precision = Precision::kIEEE;
  std::vector<int> batch, m, n;  // positions in the operation's axis, in its order
  std::vector<int> k;            // positions in its reduce_axis, in its order

  // The product of the extents of a group of `op`'s axes (of its reduce axes for `k`).
  static int64_t Extent(const te::OperationNode& op, const std::vector<int>& group, bool reduce = false);
  // Whether `op` is this form already: the batch axes, then one M and one N axis, one K; A read at
  // [batch..., m, k] and B at [batch..., k, n].
  bool IsPlain(const te::OperationNode& op) const;
};

// The matrix axes of a sum of products of two loads (a precision's product of them), or why not.
Result<MatrixAxes> FindMatrixAxes(const te::OperationNode& op);

}  // namespace autotune::tir
