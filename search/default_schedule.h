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
// Hand-picked decisions for one sketch on the workload of `fresh` (an untransformed schedule); for
// cuda.split_k: the part count that gives about 256 Ki partial sums, output tiles planned jointly
// (about 128 threads, up to 8 x 2 outputs per thread).
SketchDecisions DefaultDecisions(const tir::Schedule& fresh, const SketchSpec& sketch);

Result<tir::Schedule> DefaultSchedule(const tir::Workload& workload, tir::TargetKind target);
// The default schedule first, then one schedule per other sketch offered for the workload, each with
// its hand-picked decisions (the first batch of a tuning job measures them all).
std::vector<tir::Schedule> DefaultSchedules(const tir::Workload& workload, tir::TargetKind target);
// A random schedule from `seed`: the sketch is drawn uniformly among the offered ones (no draw when
// there is one), then every decision is sampled.
Result<tir::Schedule> RandomSchedule(const tir::Workload& workload, tir::TargetKind target, uint64_t seed);
// A random schedule of one sketch.
Result<tir::Schedule> RandomScheduleOfSketch(const tir::Workload& workload, const SketchSpec& sketch, uint64_t seed);

}  // namespace autotune::search
