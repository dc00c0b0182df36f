// The default schedule of a workload on a target (a sensible hand-picked tiling, the first candidate
// and the fallback), and random schedules from the same template.
#pragma once

#include <cstdint>

#include "search/tiling_template.h"
#include "tir/ops/workload.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

// Heuristic tile sizes: modest register tiles, 16x16-ish thread blocks on GPUs, vector-width inner
// loops and small register blocks on CPUs.
TemplateDecisions DefaultDecisions(tir::TargetKind target);

Result<tir::Schedule> DefaultSchedule(const tir::Workload& workload, tir::TargetKind target);
// A schedule with every decision of the template sampled from `seed`.
Result<tir::Schedule> RandomSchedule(const tir::Workload& workload, tir::TargetKind target, uint64_t seed);

}  // namespace autotune::search
