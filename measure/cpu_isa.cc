#include "measure/cpu_isa.h"

#include <fmt/format.h>

namespace autotune::measure {

// x86-64-v4 is AVX-512 F/BW/DQ/VL, v3 AVX2 with FMA, BMI and F16C: GCC's and Clang's names for the
// levels (psABI).
std::vector<CpuIsa> KnownCpuIsas() {
#if defined(__x86_64__)
  // GCC vectorizes for 256-bit registers on AVX-512 hosts unless told otherwise: a register-tiled gemm
  // 512^3 ran at 200 GFLOP/s so and at 324 with 512-bit vectors (2 cores).
  return {{"avx512", {"-march=x86-64-v4", "-mtune=native", "-mprefer-vector-width=512"}, 16, 32, "AVX512_CORE",
           "SkylakeX"},
          {"avx2", {"-march=x86-64-v3", "-mtune=native"}, 8, 16, "AVX2", "Haswell"},
          {"generic", {"-march=x86-64", "-mtune=native"}, 4, 16, "SSE41", "Nehalem"}};
#else
  return {{"generic", {}, 4, 16, "", ""}};
#endif
}

std::string CpuIsaNames() {
  std::string names;
  for (const CpuIsa& isa : KnownCpuIsas()) names += (names.empty() ? "" : ", ") + isa.name;
  return names;
}

Result<CpuIsa> FindCpuIsa(const std::string& name) {
  for (CpuIsa& isa : KnownCpuIsas()) {
    if (isa.name == name) return std::move(isa);
  }
  return MakeError(fmt::format("unknown cpu instruction set '{}' (known: {})", name, CpuIsaNames()));
}

// Features both GCC's and Clang's __builtin_cpu_supports name (Clang 14 has no "x86-64-v3", "f16c" or
// "movbe"): every processor with AVX2, FMA and BMI2 has the rest of v3 (Haswell, Zen on).
bool HostRuns(const CpuIsa& isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
  if (isa.name == "avx2") return v3;
  if (isa.name == "avx512") {
    return v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  }
#endif
  return isa.name == "generic";
}

CpuIsa NativeCpuIsa() {
  for (CpuIsa& isa : KnownCpuIsas()) {
    if (!HostRuns(isa)) continue;
    const bool wide = isa.name == "avx512";
    isa.flags = {"-march=native"};
    if (wide) isa.flags.push_back("-mprefer-vector-width=512");
    isa.onednn_max_isa = isa.openblas_coretype = "";  // the peers choose for this host as well
    return std::move(isa);
  }
  return KnownCpuIsas().back();
}

Result<CpuIsa> ResolveCpuIsa(const std::string& name) {
  if (name.empty()) return NativeCpuIsa();
  AT_TRY(isa, FindCpuIsa(name));
  if (!HostRuns(isa)) {
    const std::string native = NativeCpuIsa().name;
    return MakeError(fmt::format("this host cannot run {} code (it runs {}): use --target cpu or cpu:{}", name,
                                 native, native));
  }
  return isa;
}

}  // namespace autotune::measure
