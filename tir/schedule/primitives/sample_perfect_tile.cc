// sample_perfect_tile: draws n tile sizes whose product is exactly the loop's extent, the innermost
// at most max_innermost (0: no limit). Each prime factor of the extent goes to a random level.
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"
#include "tir/int_arith.h"
#include "tir/schedule/perfect_tile.h"

namespace autotune::tir {

namespace {

Result<void> CheckTiles(const std::vector<int64_t>& tiles, int n, int64_t extent, int64_t max_innermost) {
  if (static_cast<int>(tiles.size()) != n) return MakeError(fmt::format("a tiling decision needs {} sizes", n));
  int64_t product = 1;
  for (int64_t t : tiles) {
    if (t < 1) return MakeError("tile sizes must be positive");
    if (!CheckedMul(product, t, DType::kInt64, &product)) {
      return MakeError(fmt::format("tile sizes multiply to more than 2^63, not the extent {}", extent));
    }
  }
  if (product != extent) return MakeError(fmt::format("tile sizes multiply to {}, not the extent {}", product, extent));
  if (max_innermost > 0 && tiles.back() > max_innermost) {
    return MakeError(fmt::format("innermost tile {} exceeds the limit {}", tiles.back(), max_innermost));
  }
  return {};
}

}  // namespace

Result<std::vector<IntRV>> Schedule::SamplePerfectTile(LoopRV loop, int n, int64_t max_innermost,
                                                       std::optional<std::vector<int64_t>> decision) {
  auto where = Resolve(loop);
  if (!where) return where.error();
  if (n < 1 || n > 8) return MakeError("sample_perfect_tile needs 1 to 8 levels");
  const int64_t extent = state_.stages[where->first].iters[where->second].extent;
  std::vector<int64_t> tiles;
  if (decision) {
    tiles = *decision;
  } else {
    tiles = RandomPerfectTile(rng_, extent, n, max_innermost);
  }
  if (auto ok = CheckTiles(tiles, n, extent, max_innermost); !ok) return ok.error();
  std::vector<IntRV> out;
  std::vector<std::string> syms;
  for (int64_t t : tiles) {
    out.push_back(NewIntRV(t));
    syms.push_back(IntSymbol(out.back().id));
  }
  Record("sample_perfect_tile", {Sym(loop)}, {{"n", n}, {"max_innermost", max_innermost}}, syms, tiles);
  return out;
}

InstructionKind SamplePerfectTileInstruction() {
  return {"sample_perfect_tile", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto loop = replay::LoopAt(inst, 0, env);
            if (!loop) return loop.error();
            auto n = replay::Attr<int>(inst, "n");
            auto max_inner = replay::Attr<int64_t>(inst, "max_innermost");
            if (!n) return n.error();
            if (!max_inner) return max_inner.error();
            std::optional<std::vector<int64_t>> decision;
            if (!inst.decision.is_null()) {
              decision = replay::IntegerListOf<int64_t>(inst.decision);
              if (!decision) return MakeError("decision must be a list of integers");
            }
            auto out = sch.SamplePerfectTile(*loop, *n, *max_inner, decision);
            if (!out) return out.error();
            return replay::BindAll(env.ints, inst, *out);
          }};
}

}  // namespace autotune::tir
