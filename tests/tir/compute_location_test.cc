// The primitives that move a stage's computation (compute_at, reverse_compute_at, compute_root,
// compute_inline, reverse_compute_inline): recorded in the trace, replayed to the same lowered IR.
#include <gtest/gtest.h>

#include "tests/tir/schedule_test_util.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

TEST(SchedulePrimitives, CacheReadOfAStageAndComputeInline) {
  CheckRoundTrip("conv2d", "N=1,C=2,H=6,W=6,K=3,R=3,S=3,pad=1", "", TargetKind::kCpu, [](Schedule& s) {
    auto conv = OK(s.GetStage("conv"));
    auto pad = OK(s.GetStage("pad"));
    auto shared = OK(s.CacheRead(pad, Scope::kLocal, {conv}));
    OKV(s.ComputeInline(pad));
    auto l = OK(s.GetLoops(conv));
    OKV(s.ComputeAt(shared, l[2]));
  }, "compute_inline");
}

TEST(SchedulePrimitives, ReverseComputeAtAndComputeRoot) {
  CheckRoundTrip("gemm", kGemm, "bias,relu", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto E = OK(s.GetStage("C_bias_relu"));
    auto pad = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    auto i = OK(s.Split(l[0], {std::monostate{}, int64_t{8}}));
    OKV(s.ReverseComputeAt(E, i[0]));
    OKV(s.ComputeRoot(pad));
  }, "reverse_compute_at");
}

TEST(SchedulePrimitives, ReverseComputeInlineIntoTheCopyOut) {
  CheckRoundTrip("gemm", kGemm, "bias,relu", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    OK(s.CacheWrite(C, Scope::kLocal));
    auto E = OK(s.GetStage("C_bias_relu"));
    OKV(s.ReverseComputeInline(E));
  }, "reverse_compute_inline");
}

}  // namespace
}  // namespace autotune::tir
