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

Result<tir::Schedule> DefaultSchedule(const tir::Workload& workload, tir::TargetKind target);
// A random schedule from `seed`: the sketch is drawn uniformly among the offered ones (no draw when
// there is one), then every decision is sampled.
Result<tir::Schedule> RandomSchedule(const tir::Workload& workload, tir::TargetKind target, uint64_t seed);
// A random schedule of one sketch.
Result<tir::Schedule> RandomScheduleOfSketch(const tir::Workload& workload, const SketchSpec& sketch, uint64_t seed);

}  // namespace autotune::search
