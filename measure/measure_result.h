// The outcome of measuring one candidate: latencies or a typed error, and the correctness verdict.
// A candidate that fails to build, crashes, hangs or computes a wrong answer is an ordinary result
// with an error kind, never an exception or an abort.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace autotune::measure {

enum class ErrorKind {
  kNone,
  kInvalidSchedule,  // the program is not valid for its target (e.g. a barrier under a thread-dependent branch)
  kBuildError,       // codegen or the compiler failed
  kBuildTimeout,
  kRunError,         // crash (signal), load failure, bad arguments
  kRunTimeout,
  kWrongAnswer,      // ran, but the output differs from the reference
};
const char* ErrorKindName(ErrorKind k);  // "NONE", "INVALID_SCHEDULE", ...
std::optional<ErrorKind> ParseErrorKind(std::string_view s);

struct MeasureResult {
  ErrorKind error_kind = ErrorKind::kNone;
  std::string error_message;
  std::vector<double> latencies_ms;  // every timed repeat, in order (empty on error)
  double median_ms = 0;              // the figure: median of latencies_ms (0 on error)
  double spread = 0;                 // (max - min) / median of latencies_ms: the repeat-to-repeat noise
  bool correct = false;              // output matched the reference
  double max_rel_error = 0;          // see measure/reference_check.h for the rule (inf: NaN or unwritten)
  double build_seconds = 0;          // wall time of the build (with the cache lookup)
  double build_cpu_seconds = 0;      // CPU time of the compiler process; 0: not measured or cached
  double run_seconds = 0;            // wall time of the run, check and repeats included
  // Of run_seconds, the warm-up and timed repeats (cuda; 0: not measured). The rest is the fixed cost
  // of a candidate: loading its module, the checked run, the comparison, the round trip to the
  // process that runs it.
  double timed_seconds = 0;

  bool ok() const { return error_kind == ErrorKind::kNone; }
  static MeasureResult Error(ErrorKind kind, std::string message);
};

// Fills median_ms and spread from latencies_ms.
void Summarize(MeasureResult& r);

// JSON with keys latency_ms (median, null on error), gflops (from the workload's flops, null on
// error), correct, max_rel_error (null when not finite), error (null or "KIND: message"), error_kind,
// latencies_ms, spread, build_s, run_s, timed_s (when measured).
nlohmann::json ToJson(const MeasureResult& r, double flops);
MeasureResult MeasureResultFromJson(const nlohmann::json& j);

}  // namespace autotune::measure
