// Instruction descriptors of the schedule primitives, one per file in this folder, and helpers the
// primitives share.
#pragma once

#include "tir/schedule/schedule.h"

namespace autotune::tir {

InstructionKind GetStageInstruction();
InstructionKind GetLoopsInstruction();
InstructionKind SplitInstruction();
InstructionKind ReorderInstruction();
InstructionKind FuseInstruction();
InstructionKind BindInstruction();
InstructionKind UnrollInstruction();
InstructionKind VectorizeInstruction();
InstructionKind ParallelInstruction();
InstructionKind AnnotateUnrollInstruction();
InstructionKind CacheReadInstruction();
InstructionKind CacheWriteInstruction();
InstructionKind ComputeAtInstruction();
InstructionKind ReverseComputeAtInstruction();
InstructionKind ComputeRootInstruction();
InstructionKind ComputeInlineInstruction();
InstructionKind ReverseComputeInlineInstruction();
InstructionKind StorageAlignInstruction();
InstructionKind ReorderStorageInstruction();
InstructionKind SetScopeInstruction();
InstructionKind DoubleBufferInstruction();
InstructionKind PipelineInstruction();
InstructionKind RFactorInstruction();
InstructionKind ReIndexInstruction();
InstructionKind TensorizeInstruction();
InstructionKind PadEinsumInstruction();
InstructionKind MatrixFormInstruction();
InstructionKind PackInputInstruction();
InstructionKind SamplePerfectTileInstruction();
InstructionKind SampleCategoricalInstruction();
InstructionKind SampleComputeLocationInstruction();

// True when some loop of another stage is attached to (stage, iter): such a loop cannot be split,
// fused or moved without moving the attached stages' loop nest too.
bool HasAttachedStages(const ScheduleState& state, int stage, int iter);
// `base`, or `base` with the first number appended that names no stage or kernel input yet.
std::string UniqueStageName(const ScheduleState& state, const std::string& base);

}  // namespace autotune::tir

namespace autotune::tir {

// Shared by bind, unroll, vectorize and parallel: checks and sets the kind of a leaf loop.
Result<void> SetLoopKind(ScheduleState& state, int stage, int iter, ForKind kind, ThreadTag tag);

}  // namespace autotune::tir

namespace autotune::tir {

// True when every read of `producer` in `consumer`'s body is producer[axis0, axis1, ...] with the
// consumer's own axes in order (an elementwise consumer of the same shape), and it reads it at all.
bool ReadsElementwise(const te::OperationNode& consumer, const BufferNode* producer);
// The same for any consumer, a reduction too: every read is producer[the consumer's axes].
bool ReadsAtOwnAxes(const te::OperationNode& consumer, const BufferNode* producer);
// Whether `consumer`, another reader of `stage` than `host`, is computed at the same loop (`iter`)
// of `host`, has `stage`'s shape and reads it at its own axes: then what `host` reads of `consumer`
// covers what `consumer` reads of `stage` (a row's reductions computed together at its loop).
bool ComputedAlongside(const ScheduleState& state, int consumer, int stage, int host, int iter);
// Whether `consumer` is computed at a loop of `host` at or inside the loop `iter`: then what `host`
// reads of `consumer` there bounds what `consumer` reads (a shared-memory copy computed at a
// reduction's outer loop for the register fragments that its inner loop fills).
bool ComputedInside(const ScheduleState& state, int consumer, int host, int iter);

}  // namespace autotune::tir

namespace autotune::tir {

// Replaces every read producer[idx...] in `body` by the producer's body at those indices.
Expr InlineReads(const Expr& body, const te::OperationNode& producer);

}  // namespace autotune::tir
