// Multi-level tiling templates for the built-in operators: a reduction stage, optionally with
// padding before it and an elementwise epilogue after it. The same template makes the default
// schedule (decisions from a heuristic) and random schedules (decisions sampled), so both go through
// the same primitives and produce replayable traces.
//
//  - cuda: Ansor's SSSRRSRS structure: padding inlined into a shared-memory copy; every input read
//    through shared memory cooperatively by all threads at the outer reduction loop, each thread
//    loading 1, 2 or 4 consecutive elements (float2/float4 where aligned); the reduction
//    accumulated in registers (cache_write local) at the thread loop; the epilogue inlined into the
//    copy-out; spatial tiles at block, virtual thread, thread and inner levels; unroll pragma.
//  - cpu: SSRSRS: padding inlined, outer spatial tiles fused and parallel, innermost spatial loop
//    vectorized, epilogue computed per outer tile, unroll pragma.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "tir/schedule/schedule.h"

namespace autotune::search {

// What a tile decision is for; the decider may use it to pick sizes.
struct TileRequest {
  bool reduce = false;
  int axis = 0;       // index among the spatial (or reduce) axes of the reduction stage
  int num_axes = 1;   // how many spatial (or reduce) axes there are
  int64_t extent = 1;
  int levels = 1;
  int64_t max_innermost = 0;
};

// Returns tile sizes for a request, or nullopt to sample them at random.
using TileDecider = std::function<std::optional<std::vector<int64_t>>(const TileRequest&)>;
// Returns the index of the chosen unroll depth, or nullopt to sample it.
using UnrollDecider = std::function<std::optional<int64_t>(const std::vector<int64_t>& candidates)>;

// Returns the index of the chosen vector width of cooperative loads, or nullopt to sample it.
using VectorDecider = std::function<std::optional<int64_t>(const std::vector<int64_t>& candidates)>;

struct TemplateDecisions {
  TileDecider tiles = [](const TileRequest&) { return std::nullopt; };
  UnrollDecider unroll = [](const std::vector<int64_t>&) { return std::nullopt; };
  VectorDecider vector = [](const std::vector<int64_t>&) { return std::nullopt; };
};

// Applies the template of `sch`'s target to the workload of `sch` (a fresh schedule).
Result<void> ApplyTilingTemplate(tir::Schedule& sch, const TemplateDecisions& decisions);

}  // namespace autotune::search
