// The default schedule of a workload on a target (the target's first sketch with hand-picked
// decisions: the first candidate and the fallback), and random schedules (a sketch offered for the
// workload, picked at random, with every decision sampled).
#pragma once

#include <cstdint>

#include "search/sketch.h"
#include "tir/ops/workload.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

// Heuristic tile sizes: modest register tiles, 16x16-ish thread blocks on GPUs, vector-width inner
// loops and small register blocks on CPUs.
SketchDecisions DefaultDecisions(tir::TargetKind target);
// The same, with smaller tiles: `shrink` 0 is DefaultDecisions, each step up to
// kDefaultShrinkSteps - 1 takes smaller cuda block tiles (the last one also takes the reduction one
// element at a time into shared memory); the cpu decisions do not shrink.
inline constexpr int kDefaultShrinkSteps = 7;
SketchDecisions DefaultDecisionsShrunk(tir::TargetKind target, int shrink);
// Hand-picked decisions for one sketch on the workload of `fresh` (an untransformed schedule); for
// cuda.split_k: the part count that gives about 256 Ki partial sums, output tiles planned jointly
// (about 128 threads, up to 8 x 2 outputs per thread).
SketchDecisions DefaultDecisions(const tir::Schedule& fresh, const SketchSpec& sketch);

// On cuda, when the default decisions make a kernel that does not fit the GPU (sm_90's limits, e.g.
// a 7x7 stride-2 convolution's input tile in shared memory), the first of the shrunk decisions that
// fits; none fitting, the default as it is.
Result<tir::Schedule> DefaultSchedule(const tir::Workload& workload, tir::Target target);
// One sketch's schedule with its hand-picked decisions: the default schedule for the target's first
// sketch, else DefaultDecisions(fresh, sketch) applied; an error when the sketch is not offered for
// the workload on its target (ApplicableSketches) or does not apply. `cpu`: the target's vectors.
Result<tir::Schedule> HandPickedSchedule(const tir::Workload& workload, const SketchSpec& sketch,
                                         tir::CpuVectors cpu = {});
// The default schedule first, then one schedule per other sketch offered for the workload, each with
// its hand-picked decisions (the first batch of a tuning job measures them all).
// `sketches`: the sketches searched (empty: the default set, search/sketch.h).
std::vector<tir::Schedule> DefaultSchedules(const tir::Workload& workload, tir::Target target,
                                            const std::vector<std::string>& sketches = {});
// A random schedule from `seed`: the sketch is drawn uniformly among the offered ones (no draw when
// there is one), then every decision is sampled.
Result<tir::Schedule> RandomSchedule(const tir::Workload& workload, tir::Target target, uint64_t seed,
                                     const std::vector<std::string>& sketches = {});
// A random schedule of one sketch.
Result<tir::Schedule> RandomScheduleOfSketch(const tir::Workload& workload, const SketchSpec& sketch, uint64_t seed,
                                             tir::CpuVectors cpu = {});

}  // namespace autotune::search
