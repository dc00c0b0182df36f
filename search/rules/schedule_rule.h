// A schedule rule: one step of a sketch (Ansor's term for a schedule structure whose numbers are
// still to be sampled), e.g. "tile the loops at block, thread and register levels" or "read the
// inputs through shared memory". A sketch is an ordered list of rule names (search/sketch.cc); each
// rule applies schedule primitives to a fresh schedule of the workload, sampling its decisions
// through the Schedule (so the trace replays) unless SketchDecisions fixes them. Rules pass each
// other what later steps need (the stage being tiled, its thread loop, ...) in the SketchContext.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "search/sketch_decisions.h"
#include "support/result.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

// The stages a sketch works on, by name (names survive the primitives; stage handles are per schedule).
struct SketchRoles {
  std::string main;      // the reduction that does the work (after split-K: its partial-sums stage)
  std::string pad;       // an elementwise producer of the reduction (padding), or ""
  std::string epilogue;  // the elementwise consumer that writes the output, or ""
  std::string combine;   // after split-K: the stage that sums the partials, else ""
  std::string reindexed;  // after im2col: the reindexed input (the im2col matrix), else ""
};

// The roles of a fresh schedule's stages: one reduction, at most one producer stage, an optional
// elementwise output stage after it.
Result<SketchRoles> FindSketchRoles(const tir::ScheduleState& state);

// The stages of a row operator (softmax, layer_norm, rms_norm, norm): reductions over the trailing
// axes of rows, whose axes are the output's first `row_dims`; elementwise stages of the output's shape
// between them, some written out (add_rms_norm's sum); the elementwise output.
struct RowRoles {
  std::vector<std::string> reductions;  // in topological order
  std::vector<std::string> elementwise;
  std::vector<std::string> side_outputs;  // elementwise, written out: computed at the row's loop
  std::string output;
  size_t row_dims = 0;
};
// The row roles of a fresh schedule, or an error saying why it is not a row operator.
Result<RowRoles> FindRowRoles(const tir::ScheduleState& state);

// What the rules of one sketch application share.
struct SketchContext {
  SketchContext(const SketchDecisions& d, SketchRoles r) : decisions(d), roles(std::move(r)) {}
  const SketchDecisions& decisions;
  SketchRoles roles;
  int block_only_axes = 0;               // leading spatial axes of roles.main tiled only at block level
  tir::StageRV main_stage;               // a handle to roles.main, once a rule has looked it up
  tir::StageRV accumulator;              // the stage that accumulates in registers (cache_write_local)
  std::vector<tir::StageRV> shared;      // shared-memory copies of the accumulator's inputs
  std::optional<tir::StageRV> operand_copy;  // cpu: copy_operand_cpu's local copy, placed by the tiling
  bool operand_copy_channels_last = false;    // ... laid out with its first dimension last
  std::optional<tir::StageRV> input_copy;    // cpu, channel vectors: the padded input's local copy, too
  bool input_copy_once = false;               // ... made once, before the parallel tiles
  std::optional<std::string> packed_operand;  // cpu, channel vectors: weights packed once (pack_input) instead
  int vector_axis = -1;  // cpu.registers: the spatial axis its register tile vectorizes (-1: the last)
  tir::LoopRV block_loop;                // the tiled stage's outermost loop (blockIdx on cuda, parallel on cpu)
  std::vector<tir::LoopRV> reduce_outer_loops;  // cuda: the accumulator's outer reduction loops (R of R R S R S)
  std::vector<tir::IntRV> thread_factors;  // cuda: threads per spatial axis (cooperative loads use them)
  bool tiled = false;                    // multi-level tiling has run (the loops above are set)
  std::optional<RowRoles> rows;          // a row operator's roles, once split_rows has changed its stages
};

class ScheduleRule {
 public:
  virtual ~ScheduleRule() = default;
  virtual std::string_view Name() const = 0;
  // Whether the rule makes sense for this workload on this schedule's target (checked on the fresh
  // schedule, before any rule of the sketch runs). A sketch is offered only when all its rules apply.
  virtual bool AppliesTo(const tir::Schedule& fresh, const SketchRoles& roles) const {
    (void)fresh;
    (void)roles;
    return true;
  }
  virtual Result<void> Apply(tir::Schedule& sch, SketchContext& ctx) const = 0;
  // Instruction kinds that this rule always puts into a trace (none: empty). A sketch is known by
  // the set of its rules' marks, so that a stored trace tells which sketch made it (SketchOfTrace).
  virtual std::vector<std::string_view> Marks() const { return {}; }
  // Other sketches' marks that this rule puts into some of its traces only: they do not tell its
  // sketch's traces from others (tensor_core_tiling: cache_write, where no epilogue stage takes the tile).
  virtual std::vector<std::string_view> OptionalMarks() const { return {}; }
};

// A rule that applies to one target only.
template <tir::TargetKind kTarget>
class RuleFor : public ScheduleRule {
 public:
  bool AppliesTo(const tir::Schedule& fresh, const SketchRoles&) const override { return fresh.target() == kTarget; }
};
using CudaRule = RuleFor<tir::TargetKind::kCuda>;
using CpuRule = RuleFor<tir::TargetKind::kCpu>;

// The built-in rule of this name, or null.
const ScheduleRule* FindScheduleRule(std::string_view name);
// Every built-in rule's name, in registration order.
std::vector<std::string> ScheduleRuleNames();

}  // namespace autotune::search
