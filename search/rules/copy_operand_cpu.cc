// copy_operand_cpu: the operand that the register tile reads along its vectorized loop (gemm's B, a
// convolution's padded input) is copied, where decided, into a local buffer that register_tiling_cpu
// computes per parallel tile. Its rows then lie one after the other (a row of a 1024-wide B is a
// page, past what the hardware prefetches), and a padded input's bounds are tested in the copy, not
// in the innermost loop (inline_padding folds the padding into the copy).
#include <algorithm>
#include <optional>

#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"
#include "tir/analysis/expr_uses.h"

namespace autotune::search {
namespace {

// The buffer whose last index moves with `axis` in the stage's reads: the operand that a vectorized
// loop over `axis` reads contiguously; none when no buffer, or several, are read so.
std::optional<std::string> VectorOperand(const tir::Stage& st, const tir::VarNode* axis) {
  std::optional<std::string> found;
  for (const tir::BufferLoadNode* load : tir::LoadsIn(st.op->body)) {
    if (load->indices.empty()) continue;
    const auto vars = tir::VarsIn(load->indices.back());
    if (std::find(vars.begin(), vars.end(), axis) == vars.end()) continue;
    if (found && *found != load->buffer->name) return std::nullopt;
    found = load->buffer->name;
  }
  return found;
}

class CopyOperandCpu final : public CpuRule {
 public:
  std::string_view Name() const override { return "copy_operand_cpu"; }
  // The copy is a cache_read (a cuda sketch's mark) in some of this sketch's traces only.
  std::vector<std::string_view> OptionalMarks() const override { return {"cache_read"}; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    AT_TRY(sid, sch.Resolve(ctx.accumulator));
    const tir::Stage& acc = sch.state().stages[sid];
    const auto operand = VectorOperand(acc, acc.op->axis.back().var.get());
    if (!operand) return {};
    const auto& inputs = sch.state().inputs;
    const bool input = std::any_of(inputs.begin(), inputs.end(), [&](const auto& in) { return in->name == *operand; });
    if (!input && *operand != ctx.roles.pad) return {};  // a stage of the kernel's own: left as it is
    AT_TRY(choice, SampleChoice(sch, {0, 1}, ctx.decisions.copy_operand));
    AT_TRY(copy, sch.Resolve(choice));
    if (copy == 0) return {};
    if (input) {
      AT_TRY(cached, sch.CacheReadInput(*operand, tir::Scope::kLocal, {ctx.accumulator}));
      ctx.operand_copy = cached;
    } else {
      AT_TRY(pad, sch.GetStage(*operand));
      AT_TRY(cached, sch.CacheRead(pad, tir::Scope::kLocal, {ctx.accumulator}));
      ctx.operand_copy = cached;
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeCopyOperandCpuRule() { return std::make_unique<CopyOperandCpu>(); }

}  // namespace autotune::search
