// matrix_form_cpu: a convolution whose output pixels are contiguous columns of its input (a 1x1
// window, stride 1, no padding, one image) is tiled as the gemm it is: weights [K][C] times input
// [C][pixels]. matrix_form rewrites it; the weights are read in place (inlined into the product),
// the input's matrix B is left for copy_operand_cpu to copy per parallel tile as a gemm's B (then
// inline_padding folds it into its reader), the product is the register tile's accumulator, and the
// output's pixel loops are fused into one column loop that register_tiling_cpu vectorizes. As a convolution (vectors of output
// channels, four pixels a step) the 256-channel 1x1 layer of ResNet ran at 0.44-0.47 ms on 2 AVX-512
// cores; the same product as a gemm's default schedule at 0.345.
#include <algorithm>
#include <unordered_map>

#include "search/rules/builtin_rules.h"
#include "search/rules/matrix_rewrite.h"
#include "tir/analysis/expr_uses.h"
#include "tir/transform/simplify.h"
#include "tir/transform/substitute.h"

namespace autotune::search {
namespace {

// Whether the columns of the matrix form are contiguous in B: the column axes of extent above 1
// index B's last dimensions in order, each alone (give or take reduction iterators of extent 1),
// over B's whole extent there, and no other dimension.
bool ColumnsContiguous(const tir::te::OperationNode& op, const tir::MatrixAxes& axes) {
  std::vector<const tir::te::IterVar*> columns;
  for (int i : axes.n) {
    if (op.axis[i].extent > 1) columns.push_back(&op.axis[i]);
  }
  std::unordered_map<const tir::VarNode*, tir::Expr> unit;
  for (const auto& r : op.reduce_axis) {
    if (r.extent == 1) unit[r.var.get()] = tir::IntImm(0, r.var->dtype);
  }
  const std::vector<tir::Expr>& index = axes.b->indices;
  if (columns.size() > index.size()) return false;
  const size_t first = index.size() - columns.size();
  for (size_t d = 0; d < index.size(); ++d) {
    const tir::Expr at = tir::Simplify(tir::Substitute(index[d], unit));
    for (size_t c = 0; c < columns.size(); ++c) {
      const bool here = d == first + c;
      const std::vector<const tir::VarNode*> vars = tir::VarsIn(at);
      const bool uses = std::find(vars.begin(), vars.end(), columns[c]->var.get()) != vars.end();
      if (here && (at.get() != columns[c]->var.get() || !tir::IsConstInt(axes.b->buffer->shape[d], columns[c]->extent))) {
        return false;
      }
      if (!here && uses) return false;
    }
  }
  return true;
}

class MatrixFormCpu final : public CpuRule {
 public:
  std::string_view Name() const override { return "matrix_form_cpu"; }
  std::vector<std::string_view> Marks() const override { return {"matrix_form", "set_scope"}; }
  bool AppliesTo(const tir::Schedule& fresh, const SketchRoles& roles) const override {
    const int main = fresh.state().FindStage(roles.main);
    if (!CpuRule::AppliesTo(fresh, roles) || main < 0) return false;
    const tir::te::OperationNode& op = *fresh.state().stages[main].op;
    auto axes = tir::FindMatrixAxes(op);
    return axes && !axes->IsPlain(op) && ColumnsContiguous(op, *axes);
  }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    AT_TRY(axes, RewriteAsMatrices(sch, ctx.roles));
    AT_TRY(product, sch.GetStage(ctx.roles.main));
    AT_TRY(pid, sch.Resolve(product));
    const std::vector<const tir::BufferNode*> operands = tir::te::ReadBuffers(sch.state().stages[pid].op->body);
    if (operands.size() != 2) return MakeError("matrix_form_cpu: the product reads two operands");
    std::string b;
    for (int id : sch.state().order) {
      if (sch.state().stages[id].op->buffer.get() == operands[1]) b = sch.state().stages[id].name();
    }
    // The weights are read in place (inlined into the product).
    AT_TRY_VOID(InlineAllBut(sch, {ctx.roles.main, b}));
    AT_TRY_VOID(sch.SetScope(product, tir::Scope::kLocal));
    AT_TRY(out, sch.GetStage(sch.state().stages[sch.state().OutputStage()].name()));
    AT_TRY_VOID(FuseOutputAsMatrix(sch, out, axes));
    ctx.main_stage = out;
    ctx.accumulator = product;
    ctx.roles.epilogue.clear();
    ctx.roles.pad = b;
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeMatrixFormCpuRule() { return std::make_unique<MatrixFormCpu>(); }

}  // namespace autotune::search
