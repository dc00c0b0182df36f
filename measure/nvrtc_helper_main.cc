// autotune-nvrtc: compiles one CUDA source with NVRTC in a fresh process, for the NVRTC builder
// (measure/nvrtc_compiler.h, CompileToCubinInHelper, says why not a fork of the tuner).
//
//   autotune-nvrtc CPU_LIMIT_S NICE SOURCE_FILE RESULT_FILE [NVRTC_OPTION...]
//
// It lowers its own priority by NICE, limits its CPU time to CPU_LIMIT_S (RLIMIT_CPU: SIGXCPU at
// the limit, rounded up to a second), compiles SOURCE_FILE and writes the result to RESULT_FILE as
// measure::EncodeNvrtcOutput does (a failure of NVRTC itself, e.g. no NVRTC installed, is a result
// too). Exit status 0: RESULT_FILE was written; 2: bad arguments or unreadable/unwritable files
// (one line on stderr).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "measure/nvrtc_compiler.h"
#include "measure/subprocess.h"

namespace {

int Fail(const std::string& why) {
  std::fprintf(stderr, "autotune-nvrtc: %s\n", why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using autotune::measure::NvrtcOutput;
  if (argc < 5) return Fail("usage: autotune-nvrtc CPU_LIMIT_S NICE SOURCE_FILE RESULT_FILE [NVRTC_OPTION...]");
  char* end = nullptr;
  const double cpu_limit_s = std::strtod(argv[1], &end);
  if (*end || !(cpu_limit_s > 0) || !std::isfinite(cpu_limit_s)) return Fail(std::string("bad CPU limit: ") + argv[1]);
  const long nice = std::strtol(argv[2], &end, 10);
  if (*end || nice < 0 || nice > 19) return Fail(std::string("bad nice value: ") + argv[2]);
  autotune::measure::LimitThisProcess(cpu_limit_s, static_cast<int>(nice));

  std::ifstream in(argv[3], std::ios::binary);
  if (!in) return Fail(std::string("cannot read ") + argv[3]);
  const std::string source{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::vector<std::string> options(argv + 5, argv + argc);

  NvrtcOutput out;
  auto nvrtc = autotune::measure::LoadNvrtc();
  if (nvrtc) {
    out = autotune::measure::CompileToCubin(**nvrtc, source, options);
  } else {
    out.message = nvrtc.error().message;
  }
  std::ofstream result(argv[4], std::ios::binary | std::ios::trunc);
  result << autotune::measure::EncodeNvrtcOutput(out);
  if (!result.flush()) return Fail(std::string("cannot write ") + argv[4]);
  return 0;
}
