// Trace JSON as `measure --trace`, `db import` and the lookup library read it: parsed, replayed on a
// small gemm (cpu and cuda), conv2d and softmax (cuda), and lowered where it replays. Properties: a parsed
// trace prints and parses back to the same text; whatever replays also lowers or fails with an error
// value, never a crash.
#include <nlohmann/json.hpp>

#include "tests/fuzz/fuzz_check.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/schedule/schedule.h"

namespace {

const std::vector<std::pair<autotune::tir::Workload, autotune::tir::TargetKind>>& Workloads() {
  using namespace autotune::tir;
  static const auto* all = new std::vector<std::pair<Workload, TargetKind>>{
      {*MakeWorkload("gemm", "M=64,N=48,K=32", "bias,relu"), TargetKind::kCpu},
      {*MakeWorkload("gemm", "M=64,N=48,K=32", "bias,relu"), TargetKind::kCuda},
      {*MakeWorkload("conv2d", "N=1,C=8,H=10,W=10,K=16,R=3,S=3,pad=1", "bias"), TargetKind::kCuda},
      {*MakeWorkload("softmax", "M=16,N=100"), TargetKind::kCuda},
  };
  return *all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace autotune;
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  auto trace = tir::Trace::FromJson(j);
  if (!trace) return 0;
  const std::string text = trace->ToJson().dump();
  auto back = tir::Trace::FromJsonText(text);
  FUZZ_CHECK(back);
  FUZZ_CHECK(back->ToJson().dump() == text);
  for (const auto& [workload, target] : Workloads()) {
    auto sch = tir::Schedule::Replay(workload, target, *trace);
    if (!sch) continue;
    (void)tir::Lower(sch->state());
  }
  return 0;
}
