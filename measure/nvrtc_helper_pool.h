// Compile helpers that stay: processes of the helper executable (autotune-nvrtc --serve) that each
// compile one source after another, handed out to the builder's threads one compile at a time.
//
// A helper started for every compile spent more CPU on starting than on small compiles: loading
// NVRTC and its first compile's set-up cost about 70 ms of CPU each time (this machine; more on the
// H200 host's slower cores), against about 35 ms for a whole compile of a small kernel once loaded.
// A helper keeps what a fresh one had: a process of its own started with posix_spawn (nothing of the
// tuner's memory shared), its own process group (a Ctrl-C of the job does not reach it), a nice value
// above ours, and a CPU-time limit per compile: before each compile it sets its RLIMIT_CPU soft
// limit to the CPU time it has used plus the compile's limit, so a compile past it dies of SIGXCPU.
// A helper that died, or ran past the wall-time limit (then killed), is replaced by a fresh one; a
// helper retires after kCompilesPerHelper compiles, which bounds what NVRTC may leak.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "measure/subprocess.h"

namespace autotune::measure {

inline constexpr int kCompilesPerHelper = 256;

// ---- the protocol on the helper's standard input and output -----------------------------------
// Request: "ATNV", the CPU limit in microseconds (u64), the option count (u32), each option and
// then the source as a u64 size and bytes. Answer: the compile's CPU time in microseconds (u64),
// then EncodeNvrtcOutput's bytes as a u64 size and bytes.
struct HelperRequest {
  double cpu_limit_s = 0;
  std::vector<std::string> options;
  std::string source;
};
std::string EncodeHelperRequest(const HelperRequest& r);
// Blocking reads from `fd`; false at end-of-file or on a malformed request.
bool ReadHelperRequest(int fd, HelperRequest* r);
std::string EncodeHelperAnswer(double cpu_seconds, const std::string& output_bytes);

// One compile in a helper: how its process fared (as RunProcess would say of a one-shot helper:
// started, timed_out, exit_code and term_signal when it ended, its standard error as output,
// seconds, and the compile's CPU seconds) and its answer bytes (EncodeNvrtcOutput's; empty when it
// ended without one).
struct HelperCompile {
  ProcessResult process;
  std::string answer;
};

class NvrtcHelperPool {
 public:
  // `helper` is the executable, started as `helper --serve NICE`.
  NvrtcHelperPool(std::string helper, int nice);
  ~NvrtcHelperPool();  // closes the idle helpers' input: they exit
  NvrtcHelperPool(const NvrtcHelperPool&) = delete;
  NvrtcHelperPool& operator=(const NvrtcHelperPool&) = delete;

  // Thread-safe; `wall_limit_s` bounds the whole exchange.
  HelperCompile Compile(const HelperRequest& request, double wall_limit_s);

  int Started() const;  // helpers started so far (tests)

 private:
  struct Helper {
    pid_t pid = -1;
    int channel = -1;  // our end of the socket that is its standard input and output
    int errors = -1;   // read end of its standard error
    int compiles = 0;
    double cpu_answered = 0;  // CPU seconds of the compiles it answered
  };
  bool Start(Helper* h, std::string* why);
  static void Close(Helper* h);          // closes our ends; the helper exits at end-of-file
  static void EndAndReap(Helper* h, bool kill_it, ProcessResult* p);

  const std::string helper_;
  const int nice_;
  mutable std::mutex mu_;
  std::vector<Helper> idle_;
  int started_ = 0;
};

// The process-wide pool of helpers of `helper` at nice kCompileNice above ours.
NvrtcHelperPool& HelperPoolFor(const std::string& helper);

}  // namespace autotune::measure
