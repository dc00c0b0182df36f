// pack_input: the kernel takes one of its inputs packed (tir/packed_layout.h): a dimension split by a
// factor, its inner part moved last. Every stage's reads of the input become reads of the packed
// tensor, which a pack function makes once, outside the timed call (as oneDNN reorders a
// convolution's weights once). The factor is the product of tile sizes the trace sampled, so a
// mutated or transferred trace packs by its own tiles.
#include <fmt/format.h>

#include "tir/int_arith.h"
#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {
namespace {

// Reads of `from` become reads of `to` at the packed indices.
class PackedReads : public IRMutator {
 public:
  PackedReads(const BufferNode* from, Buffer to, PackedLayout layout) : from_(from), to_(std::move(to)), layout_(layout) {}
  Expr Mutate_(const BufferLoadNode* op, const Expr& self) override {
    if (op->buffer.get() != from_) return MutateFields(op, self);
    std::vector<Expr> indices;
    for (const auto& i : op->indices) indices.push_back(Mutate(i));
    return Load(to_, PackedIndices(indices, layout_));
  }

 private:
  const BufferNode* from_;
  Buffer to_;
  PackedLayout layout_;
};

}  // namespace

Result<void> Schedule::PackInput(const std::string& input, int dim, const std::vector<FactorArg>& factors) {
  if (state_.target != TargetKind::kCpu) return MakeError("pack_input applies to cpu schedules");
  int index = -1;
  for (size_t i = 0; i < state_.inputs.size(); ++i) {
    if (state_.inputs[i]->name == input) index = static_cast<int>(i);
  }
  if (index < 0) return MakeError(fmt::format("pack_input: no kernel input named '{}'", input));
  for (const auto& p : state_.packs) {
    if (p.input == index) return MakeError(fmt::format("pack_input: {} is packed already", input));
  }
  const te::Operation source = state_.inputs[index];
  if (dim < 0 || dim >= static_cast<int>(source->shape.size())) {
    return MakeError(fmt::format("pack_input: {} has no dimension {}", input, dim));
  }
  int64_t factor = 1;
  for (const auto& f : factors) {
    auto v = FactorValue(f);
    if (!v) return v.error();
    if (*v < 1) return MakeError(fmt::format("pack_input: factor {} must be positive", *v));
    factor = MulOrCap(factor, *v, INT64_MAX);
  }
  if (factor > source->shape[dim]) {
    return MakeError(fmt::format("pack_input: factor {} exceeds dimension {} of {} ({})", factor, dim, input,
                                 source->shape[dim]));
  }
  const PackedLayout layout{dim, factor};
  const te::Operation packed = te::Placeholder(UniqueStageName(state_, input + "_packed"),
                                               PackedShape(source->shape, layout), source->dtype);
  PackedReads reads(source->buffer.get(), packed->buffer, layout);
  state_.RewriteBodies(state_.order, reads);
  state_.inputs[index] = packed;
  state_.packs.push_back({index, source, layout});
  nlohmann::json inputs = nlohmann::json::array({nullptr});
  for (const auto& f : factors) inputs.push_back(FactorJson(f));
  Record("pack_input", inputs, {{"input", input}, {"dim", dim}}, {});
  return {};
}

InstructionKind PackInputInstruction() {
  return {"pack_input", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto input = replay::Attr<std::string>(inst, "input");
            if (!input) return input.error();
            auto dim = replay::Attr<int>(inst, "dim");
            if (!dim) return dim.error();
            std::vector<FactorArg> factors;
            for (size_t i = 1; i < inst.inputs.size(); ++i) {
              auto f = replay::FactorAt(inst, i, env);
              if (!f) return f.error();
              factors.push_back(*f);
            }
            return sch.PackInput(*input, *dim, factors);
          }};
}

}  // namespace autotune::tir
