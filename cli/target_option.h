// The --target value of the commands that build and measure: "cpu", "cuda", "auto", or
// "cpu:<instruction set>" (cpu:avx2, cpu:avx512, cpu:generic: measure/cpu_isa.h).
#pragma once

#include <string>

#include "db/target.h"
#include "measure/measure_config.h"
#include "tir/target.h"

namespace autotune::cli {

// What --target says every command takes (with or without "auto").
std::string TargetOptionHelp(bool with_auto);

// Splits a --target value: puts its instruction set into `config` (whether a host runs it is checked
// where it measures: ResolveMeasureTarget, a worker) and returns the kind ("cpu", "cuda" or, where
// allowed, "auto"). Throws UserError naming the forms.
std::string TakeTargetOption(const std::string& target, measure::MeasureConfig& config, bool allow_auto);

// What the search sizes its schedules for on `info` (a resolved target, local or the workers'): the
// kind and, on cpu, the vector registers of the instruction set its architecture names.
tir::Target SearchTarget(const db::TargetInfo& info);

// The same for a --target value (a cpu set named, else this host's), without resolving a device.
tir::Target SearchTarget(const std::string& target);

}  // namespace autotune::cli
