// Compiling generated C into a shared object, cached by content hash: what the C builder does for
// every candidate, and what the lookup library's runtime does for a kernel it hands out, with the
// same command, so that a client runs the code that was measured.
//
// Flags: -O3 -fopenmp -fPIC -shared -std=c11 -fno-math-errno -ffp-contract=fast.
// ISO C mode turns FMA contraction off by default; we turn it back on because kernels should be
// as fast as the hardware allows and the check tolerance (1e-4 relative) absorbs the rounding
// difference, as it does for CUDA, which contracts by default. -fno-math-errno lets calls like
// expf vectorize (kernels never read errno). No -ffast-math: NaN checks and the order of
// reductions must stay as written. Then the instruction set's (-march=native for the host's own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "measure/cpu_isa.h"

namespace autotune::measure {

class CCompiler {
 public:
  // `cc` for `isa`, with any extra flags; objects are kept in `cache_dir` (made, and trimmed to its cap, here).
  CCompiler(const std::string& cc, const CpuIsa& isa, const std::vector<std::string>& extra_flags,
            std::string cache_dir, double timeout_s);

  struct Output {
    bool ok = false;
    bool timed_out = false;
    std::string error;     // why not, with the compiler's log
    std::string artifact;  // the shared object in the cache
    bool cached = false;   // it was there already
    int64_t bytes = 0;
  };
  // The shared object of `source`, from the cache or compiled into it (atomically: a concurrent
  // compiler never sees a half-written object).
  Output Compile(const std::string& source) const;

  // The command (compiler and flags) every object is built with.
  const std::vector<std::string>& command() const { return command_; }
  const std::string& cache_dir() const { return cache_dir_; }

 private:
  std::vector<std::string> command_;
  std::string identity_;  // compiler version and host CPU: part of every cache key
  std::string cache_dir_;
  double timeout_s_;
};

}  // namespace autotune::measure
