// The schedule: a state plus the trace of the primitives applied to it. Each primitive checks its
// legality and returns an error value (the state is unchanged then); on success it is recorded in
// the trace. Handles to stages, loops and sampled integers are trace symbols, not pointers, so a
// trace replays on a fresh workload. Each primitive is defined in its own file under primitives/,
// with its instruction descriptor.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tir/ops/workload.h"
#include "support/result.h"
#include "tir/schedule/state.h"
#include "tir/schedule/trace.h"
#include "support/random.h"

namespace autotune::tir {

struct StageRV {
  int id = -1;
};
struct LoopRV {
  int id = -1;
};
struct IntRV {
  int id = -1;
};
struct ReplayEnv;
class Schedule;
// Called by Schedule::Replay before each instruction is applied; may change the copy it is given
// (ReplayOnShape re-fits tile decisions to new extents). An error ends the replay.
using InstructionRewrite = std::function<Result<void>(const Schedule& sch, const ReplayEnv& env, Instruction& inst)>;

// A split factor: inferred (monostate), a literal, or a sampled integer.
using FactorArg = std::variant<std::monostate, int64_t, IntRV>;

class Schedule {
 public:
  Schedule(const Workload& workload, Target target, uint64_t seed = 1);
  // Replays `trace` on a fresh state of `workload`. Sampling instructions use their recorded
  // decisions (an invalid decision is an error), unless `rewrite` changes them first.
  static Result<Schedule> Replay(const Workload& workload, Target target, const Trace& trace, uint64_t seed = 1,
                                 const InstructionRewrite& rewrite = {});

  const ScheduleState& state() const { return state_; }
  const Trace& trace() const { return trace_; }
  const Workload& workload() const { return *workload_; }
  TargetKind target() const { return state_.target.kind; }
  // The target with its cpu vector registers (what a replay of this schedule's trace should get).
  const Target& full_target() const { return state_.target; }

  // ---- Lookups ----
  Result<StageRV> GetStage(const std::string& name);
  Result<std::vector<LoopRV>> GetLoops(StageRV stage);
  // The stage, iter id and current extent behind a handle (for rules and tests).
  Result<std::pair<int, int>> Resolve(LoopRV loop) const;
  Result<int> Resolve(StageRV stage) const;
  Result<int64_t> Resolve(IntRV v) const;

  // ---- Loop transformations ----
  Result<std::vector<LoopRV>> Split(LoopRV loop, const std::vector<FactorArg>& factors);
  Result<void> Reorder(const std::vector<LoopRV>& order);
  Result<LoopRV> Fuse(const std::vector<LoopRV>& loops);
  Result<void> Bind(LoopRV loop, ThreadTag tag);
  Result<void> Unroll(LoopRV loop);
  Result<void> Vectorize(LoopRV loop);
  Result<void> Parallel(LoopRV loop);
  Result<void> AnnotateUnroll(LoopRV loop, FactorArg max_step);  // auto_unroll_max_step pragma
  // The tile from `loop` inward becomes one call of a tensor intrinsic (tir/analysis/tensor_intrinsics.h).
  Result<void> Tensorize(LoopRV loop, const std::string& intrinsic);

  // ---- Stage transformations ----
  Result<StageRV> CacheRead(StageRV producer, Scope scope, const std::vector<StageRV>& readers);
  // For a placeholder input, CacheRead by the input's name.
  Result<StageRV> CacheReadInput(const std::string& input, Scope scope, const std::vector<StageRV>& readers);
  Result<StageRV> CacheWrite(StageRV stage, Scope scope);
  Result<void> ComputeAt(StageRV stage, LoopRV loop);
  Result<void> ReverseComputeAt(StageRV stage, LoopRV loop);
  Result<void> ComputeRoot(StageRV stage);
  Result<void> ComputeInline(StageRV stage);
  Result<void> ReverseComputeInline(StageRV stage);
  Result<void> StorageAlign(StageRV stage, int dim, int64_t factor, int64_t offset);
  // The order of the buffer's dimensions in memory, outermost first (a permutation of 0..rank-1).
  Result<void> ReorderStorage(StageRV stage, const std::vector<int64_t>& order);
  Result<void> SetScope(StageRV stage, Scope scope);
  static constexpr int64_t kMaxPipelineStages = 4;
  Result<void> DoubleBuffer(StageRV stage, FactorArg enable);  // 0: off, 1: on (pipeline of 2 stages)
  // A shared copy refilled `stages` - 1 iterations ahead (1: off; at most kMaxPipelineStages).
  Result<void> Pipeline(StageRV stage, FactorArg stages);
  Result<StageRV> RFactor(StageRV stage, LoopRV loop);
  // A new elementwise stage holding what `consumer` reads of `read` (a stage or kernel input, by name),
  // indexed by the consumer's iterators the access uses (reduction ones first): for a convolution,
  // its im2col matrix. The consumer reads the new stage instead.
  Result<StageRV> ReIndex(StageRV consumer, const std::string& read);
  // A fresh reduction computes over its iterators' extents rounded up to `multiples` (one per
  // iterator, axes then reduce axes), reading its operands through zero-padded stages.
  Result<void> PadEinsum(StageRV stage, const std::vector<int64_t>& multiples);
  // A fresh contraction as a (batched) matrix product over fused iterators (tir/analysis/matrix_axes.h):
  // new stages <name>_a and <name>_b (its operands at the fused iterators) and <name>_matrix (their
  // product, returned); the stage itself reads the product back at its own coordinates.
  Result<StageRV> MatrixForm(StageRV stage);
  // The kernel takes input `input` packed (tir/packed_layout.h): dimension `dim` split by the product
  // of `factors`, the inner part last; every stage reads the packed tensor. cpu schedules only.
  Result<void> PackInput(const std::string& input, int dim, const std::vector<FactorArg>& factors);

  // ---- Sampling ----
  Result<std::vector<IntRV>> SamplePerfectTile(LoopRV loop, int n, int64_t max_innermost,
                                               std::optional<std::vector<int64_t>> decision = std::nullopt);
  Result<IntRV> SampleCategorical(const std::vector<int64_t>& candidates, const std::vector<double>& probs,
                                  std::optional<int64_t> decision = std::nullopt);
  // One of the candidate loops (uniformly), as a new handle: where to compute a stage.
  Result<LoopRV> SampleComputeLocation(const std::vector<LoopRV>& candidates,
                                       std::optional<int64_t> decision = std::nullopt);

  Random& rng() { return rng_; }

 private:
  friend struct ScheduleAccess;
  std::string StageSymbol(int id) const { return "s" + std::to_string(id); }
  std::string LoopSymbol(int id) const { return "l" + std::to_string(id); }
  std::string IntSymbol(int id) const { return "v" + std::to_string(id); }
  StageRV NewStageRV(int stage);
  LoopRV NewLoopRV(int stage, int iter);
  IntRV NewIntRV(int64_t value);
  void Record(std::string kind, nlohmann::json inputs, nlohmann::json attrs, std::vector<std::string> outputs,
              nlohmann::json decision = nullptr);
  // Strings, not JSON values: `{Sym(x)}` must make a one-element array, and a braced list holding
  // one JSON value copies it instead under clang (CWG 2137).
  std::string Sym(StageRV s) const { return StageSymbol(s.id); }
  std::string Sym(LoopRV l) const { return LoopSymbol(l.id); }
  std::string Sym(IntRV v) const { return IntSymbol(v.id); }
  nlohmann::json FactorJson(const FactorArg& f) const;
  Result<int64_t> FactorValue(const FactorArg& f) const;

  std::shared_ptr<const Workload> workload_;
  ScheduleState state_;
  Trace trace_;
  Random rng_;
  std::vector<int> stage_rvs_;                 // StageRV id -> stage id
  std::vector<std::pair<int, int>> loop_rvs_;  // LoopRV id -> (stage id, iter id)
  std::vector<int64_t> int_rvs_;               // IntRV id -> value
};

// How a trace instruction is replayed: `apply` resolves the input symbols through `env`, calls the
// Schedule method and binds the outputs in `env`.
struct ReplayEnv {
  std::map<std::string, StageRV> stages;
  std::map<std::string, LoopRV> loops;
  std::map<std::string, IntRV> ints;
};
struct InstructionKind {
  std::string name;
  std::function<Result<void>(Schedule& sch, const Instruction& inst, ReplayEnv& env)> apply;
};

class InstructionRegistry {
 public:
  void Register(InstructionKind kind);
  const InstructionKind* Find(const std::string& name) const;

 private:
  std::map<std::string, InstructionKind> kinds_;
};
// Explicit registration of every primitive's descriptor (one line per primitive file).
void RegisterBuiltinInstructions(InstructionRegistry& registry);
const InstructionRegistry& BuiltinInstructions();

}  // namespace autotune::tir
