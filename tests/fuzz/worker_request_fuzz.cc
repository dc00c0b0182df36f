// A worker's decoding of a Measure request: protobuf bytes, then the check of the request as a whole
// (target, workload, settings, every candidate) that runs before anything is built. Property: a
// refusal is a status with a one-line message; an accepted request has one build input per candidate.
#include "measure/remote/worker_service.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

const autotune::measure::remote::WorkerOptions& Options(bool cuda) {
  static const auto* cpu = [] {
    auto* o = new autotune::measure::remote::WorkerOptions;
    o->target_kind = "cpu";
    o->info.set_target_kind("cpu");
    o->info.set_arch("x86_64");
    return o;
  }();
  static const auto* gpu = [] {
    auto* o = new autotune::measure::remote::WorkerOptions;
    o->target_kind = "cuda";
    o->info.set_target_kind("cuda");
    o->info.set_arch("sm_90");
    return o;
  }();
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
