// Tiling several loops together: a limit that involves every axis (threads per block, elements of a
// register tile) accepts or rejects the tiles of all of them at once, so the axes that no decider
// decides are drawn together, again and again, until the limit holds. multi_level_tiling_gpu and
// register_tiling_cpu draw so, each with its own limit.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "support/random.h"
#include "tir/schedule/perfect_tile.h"

namespace autotune::search {

using AxisTiles = std::vector<std::vector<int64_t>>;  // per axis, its tile sizes, outermost first

struct JointTiling {
  std::vector<int64_t> extents;                               // per axis
  std::vector<std::optional<std::vector<int64_t>>> decided;  // per axis: the decider's tiles, if any
  int levels = 0;                                             // tiles per axis
  std::vector<int64_t> max_innermost;                         // per axis
};

// Every axis decided: the decided tiles, as given (the limit is the caller's to check). Else up to
// `draws` draws of the undecided axes (random perfect tiles, in axis order): the first that `fits`
// and is `preferred` (none: any that fits), else the first that fits, else nullopt; `last` (if not
// null) gets the last draw, for the caller's message.
inline std::optional<AxisTiles> DrawJointTiles(Random& rng, const JointTiling& j, int draws,
                                               const std::function<bool(const AxisTiles&)>& fits,
                                               const std::function<bool(const AxisTiles&)>& preferred = {},
                                               AxisTiles* last = nullptr) {
  const size_t n = j.extents.size();
  AxisTiles tiles(n);
  bool any_random = false;
  for (size_t a = 0; a < n; ++a) {
    if (j.decided[a]) tiles[a] = *j.decided[a];
    any_random = any_random || !j.decided[a];
  }
  if (!any_random) return tiles;
  std::optional<AxisTiles> first_fit;
  for (int draw = 0; draw < draws; ++draw) {
    for (size_t a = 0; a < n; ++a) {
      if (!j.decided[a]) tiles[a] = tir::RandomPerfectTile(rng, j.extents[a], j.levels, j.max_innermost[a]);
    }
    if (!fits(tiles)) continue;
    if (!preferred || preferred(tiles)) return tiles;
    if (!first_fit) first_fit = tiles;
  }
  if (last) *last = tiles;
  return first_fit;
}

}  // namespace autotune::search
