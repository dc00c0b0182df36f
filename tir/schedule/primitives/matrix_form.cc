// matrix_form: a contraction becomes a (batched) matrix product over fused iterators, as
// MetaSchedule's reindex and transform_block_layout make of a convolution before tensorizing it
// (tir/analysis/matrix_axes.h). Three new stages come before the contraction's: A[b, m, k] and
// B[b, k, n], its operands read at the fused iterators (for a convolution, the weights as rows and
// the im2col matrix; meant to be inlined into their copies), and <name>_matrix[b, m, n], their
// product. The contraction's stage keeps its name and buffer and becomes an elementwise stage that
// reads the product back at its own coordinates, so its consumers do not change. Only a fresh stage
// (no loop transformed, computed at the root) can be rewritten.
#include <fmt/format.h>

#include <unordered_map>

#include "tir/analysis/matrix_axes.h"
#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"
#include "tir/transform/substitute.h"

namespace autotune::tir {
namespace {

std::vector<Expr> Vars(const std::vector<te::IterVar>& axes) {
  std::vector<Expr> v;
  for (const auto& a : axes) v.push_back(a.var);
  return v;
}

// One fused iterator for a group of axes (outermost first).
struct FusedGroup {
  te::IterVar fused;
  std::vector<te::IterVar> parts;
};

FusedGroup FuseAxes(const std::string& name, const std::vector<te::IterVar>& axes, const std::vector<int>& group) {
  FusedGroup g{{MakeVar(name), 1}, {}};
  for (int i : group) {
    g.parts.push_back(axes[i]);
    g.fused.extent *= axes[i].extent;
  }
  return g;
}

// Each part's value in terms of the fused iterator: its digit in the mixed radix of the extents.
void AddDigits(const FusedGroup& g, std::unordered_map<const VarNode*, Expr>* values) {
  int64_t inner = g.fused.extent;
  for (const te::IterVar& part : g.parts) {
    inner /= part.extent;
    const DType t = g.fused.var->dtype;
    Expr digit = inner == 1 ? Expr(g.fused.var) : FloorDiv(g.fused.var, IntImm(inner, t));
    if (part.extent == 1) digit = IntImm(0, t);
    else if (inner * part.extent != g.fused.extent) digit = FloorMod(digit, IntImm(part.extent, t));
    (*values)[part.var.get()] = digit;
  }
}

// The fused iterator's value from its parts: the mixed-radix number they make.
Expr Combined(const FusedGroup& g) {
  Expr sum;
  int64_t inner = g.fused.extent;
  for (const te::IterVar& part : g.parts) {
    inner /= part.extent;
    const Expr term = inner == 1 ? Expr(part.var) : Mul(part.var, IntImm(inner, part.var->dtype));
    sum = sum ? Add(sum, term) : term;
  }
  return sum;
}

// A float32 value of an operand stage's element (16-bit ones widened, as the compute definitions do).
Expr Widened(const te::Operation& operand) {
  const Expr load = Load(operand->buffer, Vars(operand->axis));
  return IsHalf(operand->dtype) ? Cast(DType::kFloat32, load) : load;
}

// A stage over `axes` (fused iterators) reading `load` at its indices with the original iterators
// replaced by their digits.
te::Operation OperandStage(const std::string& name, std::vector<te::IterVar> axes, const BufferLoadNode* load,
                           const std::unordered_map<const VarNode*, Expr>& digits) {
  std::vector<Expr> index;
  for (const Expr& e : load->indices) index.push_back(Substitute(e, digits));
  return te::MakeCompute(name, std::move(axes), Load(load->buffer, index));
}

}  // namespace

Result<StageRV> Schedule::MatrixForm(StageRV stage) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  const int sid = *s;
  const te::Operation op = state_.stages[sid].op;
  const Stage& st = state_.stages[sid];
  if (!op->IsReduction() || st.attach != AttachKind::kRoot || !st.relations.empty()) {
    return MakeError(fmt::format("matrix_form: {} must be a fresh reduction", st.name()));
  }
  auto found = FindMatrixAxes(*op);
  if (!found) return MakeError("matrix_form: " + found.error().message);
  const MatrixAxes& ax = *found;
  std::optional<FusedGroup> batch;
  if (!ax.batch.empty()) batch = FuseAxes("b", op->axis, ax.batch);
  const FusedGroup m = FuseAxes("m", op->axis, ax.m), n = FuseAxes("n", op->axis, ax.n),
                   k = FuseAxes("k", op->reduce_axis, ax.k);
  std::unordered_map<const VarNode*, Expr> digits;
  const FusedGroup* b0 = batch ? &*batch : nullptr;
  for (const FusedGroup* g : {b0, &m, &n, &k}) {
    if (g) AddDigits(*g, &digits);
  }
  auto with_batch = [&](std::vector<te::IterVar> v) {
    if (batch) v.insert(v.begin(), batch->fused);
    return v;
  };
  const te::Operation a = OperandStage(UniqueStageName(state_, op->name + "_a"), with_batch({m.fused, k.fused}), ax.a, digits);
  const te::Operation b = OperandStage(UniqueStageName(state_, op->name + "_b"), with_batch({k.fused, n.fused}), ax.b, digits);
  // The same product at the same precision, A first (the form tensor intrinsics match).
  const Expr source = ProductAt(Widened(a), Widened(b), ax.precision);
  const te::Operation product = te::MakeCompute(UniqueStageName(state_, op->name + "_matrix"),
                                                with_batch({m.fused, n.fused}), te::Sum(source, {k.fused}));
  std::vector<Expr> back;
  for (const FusedGroup* g : {b0, &m, &n}) {
    if (g) back.push_back(Combined(*g));
  }
  const te::Operation readback = te::MakeCompute(op->name, op->axis, Load(product->buffer, back), op->buffer);
  state_.AddStage(a, sid);
  state_.AddStage(b, sid);
  const int pid = state_.AddStage(product, sid);
  Stage& target = state_.stages[sid];
  target.op = readback;
  InitStageIters(target);
  StageRV out = NewStageRV(pid);
  Record("matrix_form", {Sym(stage)}, {}, {StageSymbol(out.id)});
  return out;
}

InstructionKind MatrixFormInstruction() {
  return {"matrix_form", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto s = replay::StageAt(inst, 0, env);
            if (!s) return s.error();
            auto out = sch.MatrixForm(*s);
            if (!out) return out.error();
            return replay::BindAll(env.stages, inst, std::vector<StageRV>{*out});
          }};
}

}  // namespace autotune::tir
