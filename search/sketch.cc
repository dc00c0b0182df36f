#include "search/sketch.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "search/rules/rule_util.h"
#include "search/rules/schedule_rule.h"
#include "search/tensor_core_schedule.h"

namespace autotune::search {

using namespace autotune::tir;

namespace {

// cuda.direct's condition: at most a 7x7 window per output (depthwise up to 7x7, grouped
// convolutions with a few channels per group). Each input element then serves only the outputs
// whose windows cover it, few enough for L1; a gemm's or a dense convolution's element serves a
// whole row or plane of outputs, which a shared copy feeds from one load.
constexpr int64_t kMaxDirectReduction = 49;

bool ReductionFitsAWindow(const Schedule& fresh, const SketchRoles& roles) {
  const int id = fresh.state().FindStage(roles.main);
  return id >= 0 && ShapeOf(fresh.state().stages[id]).reduction <= kMaxDirectReduction;
}

// Tensor cores for a matrix product at least one whole mma tile (16x16x16) in every dimension:
// padding costs little there, and FMA sketches are not worth searching by default. Convolutions
// (implicit GEMM, through matrix_form) are searched beside their FMA sketches.
bool TensorCoreProductOfWholeTiles(const Schedule& fresh, const SketchRoles& roles) {
  auto shape = TensorCoreShape(fresh, roles);
  return shape && !shape->matrix_form && shape->m >= 16 && shape->n >= 16 && shape->k >= 16;
}

}  // namespace

const std::vector<SketchSpec>& BuiltinSketches() {
  static const std::vector<SketchSpec> sketches = {
      {"cuda.tensor_core", TargetKind::kCuda, {"tensor_core_tiling"}, true, nullptr, false,
       TensorCoreProductOfWholeTiles},
      {"cuda.tiled", TargetKind::kCuda,
       {"cache_write_local", "cache_read_shared", "inline_padding", "inline_epilogue", "multi_level_tiling_gpu",
        "cooperative_fetch", "auto_unroll"}},
      {"cuda.split_k", TargetKind::kCuda,
       {"split_k", "cache_write_local", "cache_read_shared", "inline_padding", "multi_level_tiling_gpu",
        "cooperative_fetch", "auto_unroll", "combine_partials"}},
      {"cuda.tensor_core_split_k", TargetKind::kCuda, {"split_k", "tensor_core_tiling", "combine_partials"}},
      {"cuda.im2col", TargetKind::kCuda,
       {"im2col", "cache_write_local", "cache_read_shared", "inline_padding", "inline_epilogue",
        "multi_level_tiling_gpu", "cooperative_fetch", "auto_unroll"},
       false},
      {"cuda.split_k_im2col", TargetKind::kCuda,
       {"split_k", "im2col", "cache_write_local", "cache_read_shared", "inline_padding", "multi_level_tiling_gpu",
        "cooperative_fetch", "auto_unroll", "combine_partials"},
       false},
      {"cuda.direct", TargetKind::kCuda,
       {"cache_write_local", "inline_padding", "inline_epilogue", "multi_level_tiling_gpu", "auto_unroll"},
       true,
       ReductionFitsAWindow},
      {"cpu.matrix", TargetKind::kCpu,
       {"matrix_form_cpu", "copy_operand_cpu", "inline_padding", "register_tiling_cpu", "auto_unroll"}},
      {"cpu.registers", TargetKind::kCpu,
       {"cache_write_local", "copy_operand_cpu", "inline_padding", "inline_epilogue", "register_tiling_cpu",
        "auto_unroll"}},
      {"cpu.tiled", TargetKind::kCpu,
       {"inline_padding", "multi_level_tiling_cpu", "epilogue_at_outer_tile", "auto_unroll"}},
      {"cuda.rows_split", TargetKind::kCuda, {"split_rows", "rows_gpu"}, true, nullptr, true},
      {"cuda.rows", TargetKind::kCuda, {"rows_gpu"}, true, nullptr, true},
      {"cpu.rows", TargetKind::kCpu, {"rows_cpu"}, true, nullptr, true},
  };
  return sketches;
}

bool IsRowOperator(const Schedule& fresh) { return FindRowRoles(fresh.state()).ok(); }

namespace {
// Whether the sketch's own condition and every one of its rules hold for the workload of `fresh`.
bool SketchFits(const SketchSpec& s, const Schedule& fresh, const SketchRoles& roles) {
  bool all = !s.offered || s.offered(fresh, roles);
  for (const auto& name : s.rules) {
    const ScheduleRule* rule = FindScheduleRule(name);
    all = all && rule && rule->AppliesTo(fresh, roles);
  }
  return all;
}
}  // namespace

const SketchSpec* DefaultSketch(const Schedule& fresh) {
  // A row operator's first offered sketch (cuda.rows_split where it applies); a contraction's first
  // sketch of the target whose rules apply (cuda.tensor_core for a 16-bit product), else its first
  // sketch of the target, whatever its rules say.
  if (IsRowOperator(fresh)) {
    const auto offered = ApplicableSketches(fresh);
    return offered.empty() ? nullptr : offered[0];
  }
  const SketchSpec* first = nullptr;
  auto roles = FindSketchRoles(fresh.state());
  for (const auto& s : BuiltinSketches()) {
    if (s.target != fresh.target() || s.for_rows) continue;
    if (roles && SketchFits(s, fresh, *roles)) return &s;
    if (!first) first = &s;
  }
  return first;
}

const SketchSpec* FindSketch(const std::string& name) {
  for (const auto& s : BuiltinSketches()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string BuiltinSketchNames() {
  std::string names;
  for (const auto& s : BuiltinSketches()) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

const SketchSpec* SketchOfTrace(const Trace& trace, TargetKind target) {
  std::set<std::string_view> kinds;
  for (const Instruction& inst : trace.instructions()) kinds.insert(inst.kind);
  // The marks of each sketch (and those its traces may hold besides); the trace's are the kinds among
  // the marks of every sketch that it holds. It is of the sketch whose marks it holds, and no others
  // but the sketch's optional ones.
  auto marks_of = [](const SketchSpec& s, bool optional) {
    std::set<std::string_view> marks;
    for (const std::string& name : s.rules) {
      const ScheduleRule* rule = FindScheduleRule(name);
      for (std::string_view mark : optional ? rule->OptionalMarks() : rule->Marks()) marks.insert(mark);
    }
    return marks;
  };
  std::set<std::string_view> in_trace;
  for (const auto& s : BuiltinSketches()) {
    for (std::string_view mark : marks_of(s, false)) {
      if (kinds.count(mark)) in_trace.insert(mark);
    }
  }
  for (const auto& s : BuiltinSketches()) {
    if (s.target != target) continue;
    const std::set<std::string_view> marks = marks_of(s, false), optional = marks_of(s, true);
    const bool has_marks = std::includes(in_trace.begin(), in_trace.end(), marks.begin(), marks.end());
    const bool nothing_else = std::all_of(in_trace.begin(), in_trace.end(),
                                          [&](std::string_view k) { return marks.count(k) || optional.count(k); });
    if (has_marks && nothing_else) return &s;
  }
  return nullptr;
}

std::vector<const SketchSpec*> ApplicableSketches(const Schedule& fresh, const std::vector<std::string>& chosen) {
  std::vector<const SketchSpec*> out;
  const bool rows = IsRowOperator(fresh);
  SketchRoles roles;
  if (!rows) {
    auto found = FindSketchRoles(fresh.state());
    if (!found) return out;
    roles = *found;
  }
  for (const auto& s : BuiltinSketches()) {
    if (s.target != fresh.target() || s.for_rows != rows) continue;
    if (chosen.empty() ? !s.by_default : std::find(chosen.begin(), chosen.end(), s.name) == chosen.end()) continue;
    if (!SketchFits(s, fresh, roles)) continue;
    if (chosen.empty() && s.searched_alone && s.searched_alone(fresh, roles)) return {&s};
    out.push_back(&s);
  }
  return out;
}

Result<void> ApplySketch(Schedule& sch, const SketchSpec& sketch, const SketchDecisions& decisions) {
  if (sketch.target != sch.target()) {
    return MakeError(fmt::format("sketch {} is for another target", sketch.name));
  }
  SketchRoles roles;
  if (!sketch.for_rows) {
    AT_TRY(found, FindSketchRoles(sch.state()));
    roles = found;
  }
  SketchContext ctx(decisions, roles);
  for (const auto& name : sketch.rules) {
    const ScheduleRule* rule = FindScheduleRule(name);
    if (!rule) return MakeError(fmt::format("sketch {}: no schedule rule named {}", sketch.name, name));
    if (auto r = rule->Apply(sch, ctx); !r) {
      return MakeError(fmt::format("sketch {}, rule {}: {}", sketch.name, name, r.error().message));
    }
  }
  return {};
}

}  // namespace autotune::search
