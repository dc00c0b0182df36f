// autotune-nvrtc: compiles CUDA sources with NVRTC in a process of its own, for the NVRTC builder
// (measure/nvrtc_compiler.h says why not a fork of the tuner; measure/nvrtc_helper_pool.h why it
// stays for many compiles).
//
//   autotune-nvrtc --serve NICE
//
// It lowers its own priority by NICE, then answers compile requests on its standard input, one after
// another, on its standard output (the protocol of measure/nvrtc_helper_pool.h), until end-of-file.
// Before each compile it sets its RLIMIT_CPU soft limit to the CPU time used so far plus the
// request's limit, so a compile past it ends the process (SIGXCPU). A failure of NVRTC itself (e.g.
// no NVRTC installed) is an answer too. Exit status 0 when its input ends (or stops being requests);
// 2: bad arguments or a request without a CPU limit (one line on stderr).
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "measure/nvrtc_compiler.h"
#include "measure/nvrtc_helper_pool.h"
#include "measure/subprocess.h"

namespace {

int Fail(const std::string& why) {
  std::fprintf(stderr, "autotune-nvrtc: %s\n", why.c_str());
  return 2;
}

double CpuSecondsUsed() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return autotune::measure::CpuSeconds(u);
}

// The next compile may use `limit_s` more seconds of CPU time (whole seconds, rounded up).
void LimitNextCompile(double limit_s) {
  rlimit cpu{};
  getrlimit(RLIMIT_CPU, &cpu);
  const auto soft = static_cast<rlim_t>(std::ceil(CpuSecondsUsed() + limit_s));
  cpu.rlim_cur = cpu.rlim_max == RLIM_INFINITY ? soft : std::min(soft, cpu.rlim_max);
  setrlimit(RLIMIT_CPU, &cpu);
}

}  // namespace

int main(int argc, char** argv) {
  namespace m = autotune::measure;
  if (argc != 3 || std::string(argv[1]) != "--serve") return Fail("usage: autotune-nvrtc --serve NICE");
  char* end = nullptr;
  const long nice = std::strtol(argv[2], &end, 10);
  if (*end || nice < 0 || nice > 19) return Fail(std::string("bad nice value: ") + argv[2]);
  m::LimitThisProcess(0, static_cast<int>(nice));

  m::HelperRequest request;
  while (m::ReadHelperRequest(0, &request)) {
    if (!(request.cpu_limit_s > 0)) return Fail("a request without a CPU limit");
    LimitNextCompile(request.cpu_limit_s);
    const double before = CpuSecondsUsed();
    m::NvrtcOutput out;
    auto nvrtc = m::LoadNvrtc();  // loaded once, by the first request
    if (nvrtc) {
      out = m::CompileToCubin(**nvrtc, request.source, request.options);
    } else {
      out.message = nvrtc.error().message;
    }
    const std::string answer = m::EncodeHelperAnswer(CpuSecondsUsed() - before, m::EncodeNvrtcOutput(out));
    if (!m::WriteFully(1, answer.data(), answer.size())) return 0;  // we are no longer listened to
  }
  return 0;
}
