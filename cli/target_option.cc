#include "cli/target_option.h"

#include <fmt/format.h>

#include "cli/cli_error.h"
#include "measure/cpu_isa.h"

namespace autotune::cli {

std::string TargetOptionHelp(bool with_auto) {
  return fmt::format("cpu (built for this host), cpu:ISA (built for that instruction set: {}), cuda{}",
                     measure::CpuIsaNames(), with_auto ? " or auto (cuda when a GPU and NVRTC are usable)" : "");
}

namespace {

// The kind of a --target value ("cpu:avx2" -> "cpu"), without checking it.
std::string TargetKindPart(const std::string& target) { return target.substr(0, target.find(':')); }

tir::Target CpuTarget(const measure::CpuIsa& isa) {
  return tir::Target{tir::TargetKind::kCpu, tir::CpuVectors{isa.float_lanes, isa.vector_registers}};
}

}  // namespace

tir::Target SearchTarget(const db::TargetInfo& info) {
  if (info.kind != "cpu") return tir::TargetKind::kCuda;
  auto isa = measure::FindCpuIsa(info.arch);  // records from before named the machine ("x86_64")
  return isa ? CpuTarget(*isa) : tir::Target{tir::TargetKind::kCpu};
}

tir::Target SearchTarget(const std::string& target) {
  measure::MeasureConfig config;
  if (TakeTargetOption(target, config, /*allow_auto=*/false) != "cpu") return tir::TargetKind::kCuda;
  return CpuTarget(config.cpu_isa.empty() ? measure::NativeCpuIsa() : *measure::FindCpuIsa(config.cpu_isa));
}

std::string TakeTargetOption(const std::string& target, measure::MeasureConfig& config, bool allow_auto) {
  const std::string kind = TargetKindPart(target);
  const bool has_isa = kind.size() < target.size();
  const bool known = kind == "cpu" || kind == "cuda" || (allow_auto && kind == "auto");
  if (!known || (has_isa && kind != "cpu")) {
    throw UserError{fmt::format("unknown target '{}' (expected cpu, cpu:ISA with ISA one of {}, cuda{})", target,
                                measure::CpuIsaNames(), allow_auto ? " or auto" : "")};
  }
  if (kind != "cpu") return kind;
  const std::string isa = has_isa ? target.substr(kind.size() + 1) : "";
  if (has_isa) {
    if (auto found = measure::FindCpuIsa(isa); !found) throw UserError{found.error().message};
  }
  config.cpu_isa = isa;
  return kind;
}

}  // namespace autotune::cli
