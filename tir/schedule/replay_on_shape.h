// Replaying a trace on another shape of the same operator: how a schedule tuned for one shape is
// reused for a shape that was never tuned (the lookup library's nearest answers, and seeds for the
// search of a new shape). Every instruction replays as recorded, except tile-size decisions: where
// the recorded sizes do not multiply to the new loop extent, each level gets the divisor of what
// remains that is nearest (in ratio) to its recorded size, innermost level first, so thread and
// register tiles are kept as far as divisibility allows and the outermost level absorbs the rest.
#pragma once

#include <cstdint>
#include <vector>

#include "tir/schedule/schedule.h"

namespace autotune::tir {

// Tile sizes for `extent` near `recorded` (outermost first), the innermost at most max_innermost
// (0: no limit). Returns `recorded` when it already fits.
std::vector<int64_t> AdaptTileSizes(const std::vector<int64_t>& recorded, int64_t extent, int64_t max_innermost);

// Replays `trace` on `workload` with adapted tile decisions; the returned schedule's trace holds the
// decisions actually used. Fails like Schedule::Replay when another instruction does not apply.
Result<Schedule> ReplayOnShape(const Workload& workload, Target target, const Trace& trace);

}  // namespace autotune::tir
