// What identifies the host a CPU candidate is built and measured on: the processor model (what
// -march=native means) and the C compiler. Cache keys and tuning records name the target with them.
#pragma once

#include <string>

namespace autotune::measure {

// The "model name" of /proc/cpuinfo ("AMD EPYC 9654 96-Core Processor"), or "unknown cpu".
std::string HostCpuModel();
// The machine architecture (uname -m): "x86_64", "aarch64".
std::string HostMachine();
// The first line of `cc --version` ("cc (Debian 12.2.0-14) 12.2.0"), or "" when it cannot run.
std::string CCompilerVersion(const std::string& cc);

}  // namespace autotune::measure
