#include "tir/schedule/replay_on_shape.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "tir/int_arith.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

namespace {

// The divisor of n nearest to `want` in ratio (ties: the smaller), at most `limit` (0: no limit).
int64_t NearestDivisor(int64_t n, int64_t want, int64_t limit) {
  int64_t best = 1;
  double best_distance = INFINITY;
  auto consider = [&](int64_t d) {
    if (limit > 0 && d > limit) return;
    const double distance = std::abs(std::log(static_cast<double>(d)) - std::log(static_cast<double>(want)));
    if (distance < best_distance || (distance == best_distance && d < best)) {
      best = d;
      best_distance = distance;
    }
  };
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    consider(d);
    consider(n / d);
  }
  return best;
}

}  // namespace

std::vector<int64_t> AdaptTileSizes(const std::vector<int64_t>& recorded, int64_t extent, int64_t max_innermost) {
  if (recorded.empty()) return recorded;
  int64_t product = 1;
  // A stored decision is data: its product is capped, not overflowed (it need only differ from the extent).
  for (int64_t t : recorded) product = MulOrCap(product, t, std::numeric_limits<int64_t>::max());
  const bool inner_ok = max_innermost <= 0 || recorded.back() <= max_innermost;
  if (product == extent && inner_ok) return recorded;
  std::vector<int64_t> tiles(recorded.size(), 1);
  int64_t rest = extent;
  for (size_t i = recorded.size() - 1; i >= 1; --i) {
    const int64_t limit = i + 1 == recorded.size() ? max_innermost : 0;
    tiles[i] = NearestDivisor(rest, std::max<int64_t>(recorded[i], 1), limit);
    rest /= tiles[i];
  }
  tiles[0] = rest;
  return tiles;
}

Result<Schedule> ReplayOnShape(const Workload& workload, Target target, const Trace& trace) {
  auto refit = [](const Schedule& sch, const ReplayEnv& env, Instruction& inst) -> Result<void> {
    if (inst.kind != "sample_perfect_tile" || !inst.decision.is_array() || inst.inputs.empty() ||
        !inst.inputs[0].is_string()) {
      return {};
    }
    auto loop = env.loops.find(inst.inputs[0].get<std::string>());
    const auto max_inner = inst.attrs.find("max_innermost");
    if (loop == env.loops.end() || max_inner == inst.attrs.end() || !max_inner->is_number_integer()) return {};
    auto where = sch.Resolve(loop->second);
    if (!where) return where.error();
    const int64_t extent = sch.state().stages[where->first].iters[where->second].extent;
    // Not a list of integers: the instruction's own replay reports it.
    if (auto sizes = replay::IntegerListOf<int64_t>(inst.decision)) {
      inst.decision = AdaptTileSizes(*sizes, extent, max_inner->get<int64_t>());
    }
    return {};
  };
  return Schedule::Replay(workload, target, trace, 1, refit);
}

}  // namespace autotune::tir
