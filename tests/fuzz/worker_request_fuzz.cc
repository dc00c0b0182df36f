// A worker's decoding of a Measure request: protobuf bytes, then the check of the request as a whole
// (target, workload, settings, every candidate) that runs before anything is built. Property: a
// refusal is a status with a one-line message; an accepted request has one build input per candidate.
#include "measure/remote/worker_service.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

autotune::measure::remote::WorkerOptions* MakeOptions(const char* kind, const char* arch) {
  auto* o = new autotune::measure::remote::WorkerOptions;
  o->target_kind = kind;
  o->info.set_target_kind(kind);
  o->info.set_arch(arch);
  return o;
}

const autotune::measure::remote::WorkerOptions& Options(bool cuda) {
  static const auto* cpu = MakeOptions("cpu", "x86_64");
  static const auto* gpu = MakeOptions("cuda", "sm_90");
  return cuda ? *gpu : *cpu;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace autotune::measure::remote;
  autotune::rpc::MeasureRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  for (bool cuda : {false, true}) {
    ParsedRequest parsed;
    const grpc::Status s = ParseMeasureRequest(request, Options(cuda), &parsed);
    if (!s.ok()) {
      FUZZ_CHECK(s.error_message().find('\n') == std::string::npos);
      continue;
    }
    FUZZ_CHECK(static_cast<int>(parsed.inputs.size()) == request.candidates_size());
  }
  return 0;
}
