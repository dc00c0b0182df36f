// The schedule state of a workload, in the tensor-expression style of TVM and Halide: one stage per
// operation, each with its loops (iters), the split/fuse relations between them, loop annotations
// and where the stage is computed (its attach point). Schedule primitives transform this state;
// lowering turns it into a loop nest. A state is a plain value: copying it is cheap enough for the
// search, which replays traces on fresh copies.
#pragma once

#include <string>
#include <vector>

#include "tir/buffer.h"
#include "tir/functor.h"
#include "tir/stmt.h"
#include "tir/target.h"
#include "tir/packed_layout.h"
#include "tir/te/compute_dag.h"

namespace autotune::tir {

// One loop of a stage. Root iters are the operation's axes and reduce axes; the others come from
// split and fuse. Extents are always known constants (workload shapes are static).
struct Iter {
  std::string name;
  int64_t extent = 0;
  bool is_reduce = false;
  Var var;  // the loop variable of this iter in the lowered nest
  ForKind kind = ForKind::kSerial;
  ThreadTag tag = ThreadTag::kNone;
  int64_t auto_unroll_max_step = 0;
  std::string tensorize;  // the tensor intrinsic this loop's tile becomes, or ""
};

// parent -> (outer, inner) with inner extent `factor` and outer extent `outer_extent` (>= the
// ceiling of parent / factor; extra iterations are masked by predicates), or
// (outer, inner) -> fused with fused = outer * inner_extent + inner.
struct Relation {
  enum class Kind { kSplit, kFuse } kind;
  int parent = -1;  // split: the iter split; fuse: the fused result
  int outer = -1;
  int inner = -1;
};

enum class AttachKind { kRoot, kInline, kAt, kReverseAt };

struct StorageAlignment {
  int dim = 0;          // the stride of this dimension is padded
  int64_t factor = 0;   // to factor * k + offset
  int64_t offset = 0;
};

struct Stage {
  te::Operation op;
  std::vector<Iter> iters;  // every iter ever made; an iter id is its index
  std::vector<int> root;    // axis iters, then reduce iters
  std::vector<int> leaves;  // current loops, outermost first
  std::vector<Relation> relations;
  AttachKind attach = AttachKind::kRoot;
  int attach_stage = -1;  // kAt: the consumer stage; kReverseAt: the producer stage
  int attach_iter = -1;   // the loop (iter id of attach_stage) the stage is computed in
  Scope scope = Scope::kGlobal;
  std::vector<StorageAlignment> aligns;
  std::vector<int64_t> storage_order;  // reorder_storage: dimensions in memory, outermost first; empty: as declared
  int64_t pipeline_stages = 1;  // see BufferNode::pipeline_stages
  bool is_output = false;  // written to a kernel argument: the output, or a side output (the last is the output)

  const std::string& name() const { return op->name; }
  bool IsLeaf(int iter) const;
  int LeafPosition(int iter) const;  // -1 when not a leaf
};

// pack_input: the kernel's input `input` is `source` packed (tir/packed_layout.h).
struct PackedInput {
  int input = 0;
  te::Operation source;
  PackedLayout layout;
};

struct ScheduleState {
  Target target;
  std::vector<te::Operation> inputs;  // placeholders in kernel argument order
  std::vector<PackedInput> packs;     // inputs taken packed, in the order packed
  std::vector<Stage> stages;          // stage id = index; stages are never erased
  std::vector<int> order;             // live stages (not inlined) in topological order

  static ScheduleState Make(const te::ComputeDAG& dag, Target target);
  int FindStage(const std::string& name) const;  // -1 when absent or inlined
  int OutputStage() const;  // the workload's output: the last stage that is_output
  // Live stages whose operation reads the output buffer of `stage`.
  std::vector<int> Consumers(int stage) const;
  // Live stages (computes) whose output `stage` reads.
  std::vector<int> Producers(int stage) const;
  bool IsLive(int stage) const;
  // Appends a new stage for `op` (root iters made from its axes), placed in `order` before the
  // stage `before` (or at the end when -1).
  int AddStage(const te::Operation& op, int before);
  // Replaces the buffer `from` by `to` in the body of every live stage in `readers`.
  void RedirectReads(const std::vector<int>& readers, const Buffer& from, const Buffer& to);
  // Rewrites the body of every live stage in `readers` with `m` (a stage whose body does not change is kept).
  void RewriteBodies(const std::vector<int>& readers, IRMutator& m);
};

// Makes the root iters of a stage for its operation's axes and reduce axes.
void InitStageIters(Stage& stage);

}  // namespace autotune::tir
