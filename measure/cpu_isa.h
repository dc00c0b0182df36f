// The vector instruction sets a cpu kernel can be built for. `--target cpu` builds for this host
// (-march=native) and names the best set it has; `cpu:avx2`, `cpu:avx512` and `cpu:generic` build
// for that set whatever the host has beyond it, so a kernel tuned here runs on every machine with it
// (the set is the record's architecture: `lookup --target cpu:avx2` finds only such records).
#pragma once

#include <string>
#include <vector>

#include "support/result.h"

namespace autotune::measure {

struct CpuIsa {
  std::string name;                // "avx512", "avx2", "generic"
  std::vector<std::string> flags;  // the C compiler's flags that select it
  int float_lanes = 4;             // float32 lanes of one vector register
  int vector_registers = 16;
  // What the CPU peers are told to use, so they are timed on the same instruction set: oneDNN's
  // ONEDNN_MAX_CPU_ISA and OpenBLAS's OPENBLAS_CORETYPE ("" where the peer's own choice stands).
  std::string onednn_max_isa, openblas_coretype;
};

// Every named set, widest first.
std::vector<CpuIsa> KnownCpuIsas();
// The sets by name; an unknown name is an error listing the known ones.
Result<CpuIsa> FindCpuIsa(const std::string& name);
// Whether this host can run code of `isa`.
bool HostRuns(const CpuIsa& isa);
// The widest named set this host runs ("generic" where it has no AVX2), built with -march=native.
CpuIsa NativeCpuIsa();
// The set a target's ISA part names ("" is the native set), or an error for an unknown name or one
// this host cannot run.
Result<CpuIsa> ResolveCpuIsa(const std::string& name);
// "avx512, avx2, generic": the names `cpu:` takes.
std::string CpuIsaNames();

}  // namespace autotune::measure
