#include "search/default_schedule.h"

namespace autotune::search {

using namespace autotune::tir;

namespace {

// Largest divisor of n that is at most cap.
int64_t DivisorAtMost(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// Fills levels from the innermost outward with the given caps; the outermost level takes the rest.
std::vector<int64_t> Fill(int64_t extent, const std::vector<int64_t>& caps_inner_first, int levels) {
  std::vector<int64_t> t(levels, 1);
  int64_t rest = extent;
  for (size_t i = 0; i < caps_inner_first.size() && static_cast<int>(i) < levels - 1; ++i) {
    const int64_t d = DivisorAtMost(rest, caps_inner_first[i]);
    t[levels - 1 - i] = d;
    rest /= d;
  }
  t[0] *= rest;
  return t;
}

}  // namespace

SketchDecisions DefaultDecisions(TargetKind target) {
  SketchDecisions d;
  if (target == TargetKind::kCuda) {
    // Levels: spatial [block, vthread, thread, inner, innermost]; reduce [outer, middle, inner].
    d.tiles = [](const TileRequest& r) -> std::optional<std::vector<int64_t>> {
      if (r.reduce) return Fill(r.extent, {1, r.axis == 0 ? 8 : 7}, r.levels);
      // Per thread 2 x 4 rows and columns (two virtual threads apart, so a warp's shared-memory reads
      // spread over the banks), 16 x 16 threads: 128 x 128 block tiles where the extents allow.
      if (r.axis >= r.num_axes - 2) return Fill(r.extent, {4, 1, 16, 2}, r.levels);
      return Fill(r.extent, {}, r.levels);
    };
    d.unroll = [](const std::vector<int64_t>& c) -> std::optional<int64_t> { return c.size() > 3 ? 3 : 0; };
    d.vector = [](const std::vector<int64_t>& c) -> std::optional<int64_t> { return c.size() - 1; };
  } else {
    // Levels: spatial [parallel, outer, register block, vector]; reduce [outer, inner].
    d.tiles = [](const TileRequest& r) -> std::optional<std::vector<int64_t>> {
      if (r.reduce) return Fill(r.extent, {r.axis == 0 ? 4 : 7}, r.levels);
      if (r.axis == r.num_axes - 1) return Fill(r.extent, {16, 1, 1}, r.levels);
      if (r.axis == r.num_axes - 2) return Fill(r.extent, {1, 4, 1}, r.levels);
      return Fill(r.extent, {}, r.levels);
    };
    d.unroll = [](const std::vector<int64_t>& c) -> std::optional<int64_t> { return c.size() > 2 ? 2 : 0; };
  }
  return d;
}

namespace {

const SketchSpec* FirstSketch(TargetKind target) {
  for (const auto& s : BuiltinSketches()) {
    if (s.target == target) return &s;
  }
  return nullptr;
}

}  // namespace

Result<Schedule> DefaultSchedule(const Workload& workload, TargetKind target) {
  const SketchSpec* sketch = FirstSketch(target);
  if (!sketch) return MakeError("no sketch for this target");
  Schedule sch(workload, target);
  if (auto r = ApplySketch(sch, *sketch, DefaultDecisions(target)); !r) return r.error();
  return sch;
}

Result<Schedule> RandomSchedule(const Workload& workload, TargetKind target, uint64_t seed) {
  Schedule sch(workload, target, seed);
  const std::vector<const SketchSpec*> offered = ApplicableSketches(sch);
  if (offered.empty()) return MakeError("no sketch applies to " + workload.KeyText());
  const SketchSpec* sketch = offered[0];
  if (offered.size() > 1) {
    sketch = offered[static_cast<size_t>(sch.rng().UniformInt(0, static_cast<int64_t>(offered.size()) - 1))];
  }
  if (auto r = ApplySketch(sch, *sketch, SketchDecisions{}); !r) return r.error();
  return sch;
}

Result<Schedule> RandomScheduleOfSketch(const Workload& workload, const SketchSpec& sketch, uint64_t seed) {
  Schedule sch(workload, sketch.target, seed);
  if (auto r = ApplySketch(sch, sketch, SketchDecisions{}); !r) return r.error();
  return sch;
}

}  // namespace autotune::search
