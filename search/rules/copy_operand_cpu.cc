// copy_operand_cpu: the operand that the register tile reads along its vectorized loop (gemm's B, a
// convolution's padded input) is copied, where decided, into a local buffer that register_tiling_cpu
// computes per parallel tile. Its rows then lie one after the other (a row of a 1024-wide B is a
// page, past what the hardware prefetches), and a padded input's bounds are tested in the copy, not
// in the innermost loop (inline_padding folds the padding into the copy).
//
// On a convolution whose weights alone are read along the output channels, it first decides where
// the register tile's vectors go: along the output's rows (as a gemm's), or along its output
// channels (as oneDNN's kernels: each input value broadcast against a vector of channels). With
// channel vectors the operand is the weights, and their copy is laid out channels last
// (reorder_storage), so a vector's weights lie side by side, or they are packed once so, before the
// kernel is called (pack_input); the padded input may be copied too.
#include <algorithm>
#include <optional>

#include "search/rules/builtin_rules.h"
#include "search/rules/rule_util.h"
#include "tir/analysis/expr_uses.h"

namespace autotune::search {
namespace {

// The kernel input named `name`, or null when it is a stage of the kernel's own.
const tir::te::Operation* FindInput(const tir::Schedule& sch, const std::string& name) {
  for (const auto& in : sch.state().inputs) {
    if (in->name == name) return &in;
  }
  return nullptr;
}

// Whether the register tile vectors go along the output channels (the decision, where it is one).
Result<bool> ChannelVectors(tir::Schedule& sch, const tir::Stage& acc, SketchContext& ctx) {
  const auto weights = ChannelOperand(acc);
  if (!weights || !FindInput(sch, *weights)) return false;
  AT_TRY(choice, SampleChoice(sch, {0, 1}, ctx.decisions.channel_vectors));
  AT_TRY(on, sch.Resolve(choice));
  return on == 1;
}

// The forms of an operand the register tile reads (SketchDecisions::copy_operand, copy_input).
enum OperandForm : int64_t { kAsItIs = 0, kPerTile = 1, kOnce = 2 };

// Where decided, a local copy of `operand` (an input, or the padding stage) for the register tile,
// per parallel tile (placed by register_tiling_cpu), laid out channels last where the tile's vectors
// go along the channels. With channel vectors an operand may instead be made once, before the tiles
// (`once` offered): the weights packed by the parallel tile's channels (ctx.packed_operand, done by
// register_tiling_cpu, which knows them), the padded input copied at the root (ctx.input_copy_once).
Result<std::optional<tir::StageRV>> CopyOperand(tir::Schedule& sch, SketchContext& ctx, const std::string& operand,
                                                bool channels_last, bool once, const ChoiceDecider& decide) {
  const tir::te::Operation* input = FindInput(sch, operand);
  using Copy = std::optional<tir::StageRV>;
  if (!input && operand != ctx.roles.pad) return Copy();  // a stage of the kernel's own: left as it is
  std::vector<int64_t> forms{kAsItIs, kPerTile};
  if (once) forms.push_back(kOnce);
  AT_TRY(choice, SampleChoice(sch, forms, decide));
  AT_TRY(form, sch.Resolve(choice));
  if (form == kAsItIs) return Copy();
  if (form == kOnce && input) {
    ctx.packed_operand = operand;
    return Copy();
  }
  ctx.input_copy_once = form == kOnce;
  if (!input) {
    AT_TRY(pad, sch.GetStage(operand));
    AT_TRY(cached, sch.CacheRead(pad, tir::Scope::kLocal, {ctx.accumulator}));
    return Copy(cached);
  }
  AT_TRY(cached, sch.CacheReadInput(operand, tir::Scope::kLocal, {ctx.accumulator}));
  if (channels_last) AT_TRY_VOID(sch.ReorderStorage(cached, MovedLast((*input)->shape.size(), 0)));
  return Copy(cached);
}

class CopyOperandCpu final : public CpuRule {
 public:
  std::string_view Name() const override { return "copy_operand_cpu"; }
  // The copy is a cache_read (a cuda sketch's mark) in some of this sketch's traces only.
  std::vector<std::string_view> OptionalMarks() const override { return {"cache_read"}; }
  Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const override {
    AT_TRY(sid, sch.Resolve(ctx.accumulator));
    const tir::Stage& acc = sch.state().stages[sid];
    AT_TRY(channels, ChannelVectors(sch, acc, ctx));
    ctx.vector_axis = channels ? 1 : static_cast<int>(acc.op->axis.size()) - 1;
    const auto read = VectorOperand(acc, acc.op->axis.back().var.get());
    const auto operand = channels ? ChannelOperand(acc) : read ? std::optional<std::string>(read->operand) : std::nullopt;
    if (!operand) return {};
    // Read along its first dimension (weights by output channel), the copy has that dimension last.
    const bool channels_last = channels || read->first_dim;
    AT_TRY(copy, CopyOperand(sch, ctx, *operand, channels_last, channels, ctx.decisions.copy_operand));
    ctx.operand_copy = copy;
    ctx.operand_copy_channels_last = channels_last;
    // With channel vectors the input is read one broadcast value at a time; a copy of its padded tile
    // takes the bounds tests out of the register tile (a 3x3 convolution, C=256 14x14: 1.87 -> 1.30 ms).
    if (channels && !ctx.roles.pad.empty()) {
      AT_TRY(input_copy, CopyOperand(sch, ctx, ctx.roles.pad, false, true, ctx.decisions.copy_input));
      ctx.input_copy = input_copy;
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> MakeCopyOperandCpuRule() { return std::make_unique<CopyOperandCpu>(); }

}  // namespace autotune::search
