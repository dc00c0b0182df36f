// What the sketches of a contraction rewritten as a matrix product (tir matrix_form) share: the
// rewrite itself, which moves the sketch's roles to the product, and the output stage's loops fused
// as the product's, so that the output is tiled as a matrix.
#pragma once

#include "search/rules/schedule_rule.h"
#include "support/result.h"
#include "tir/analysis/matrix_axes.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

// matrix_form on roles.main: afterwards roles.main is the product (<name>_matrix), roles.epilogue
// the stage that writes the output (the contraction itself, reading the product back, when nothing
// followed it) and roles.pad empty. Returns the contraction's matrix axes.
Result<tir::MatrixAxes> RewriteAsMatrices(tir::Schedule& sch, SketchRoles& roles);

// The output stage's loops in the product's order, each group fused: [batch], rows (M), columns (N).
Result<void> FuseOutputAsMatrix(tir::Schedule& sch, tir::StageRV out, const tir::MatrixAxes& axes);

// Every live stage but the output and those named in `keep` inlined into its consumers: padding
// into an operand, the read-back and an epilogue's steps into the output.
Result<void> InlineAllBut(tir::Schedule& sch, const std::vector<std::string>& keep);

}  // namespace autotune::search
