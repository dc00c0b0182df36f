// The loop-transform primitives split, reorder and fuse: each is recorded in the trace, and the
// trace replays from JSON to the same lowered IR.
#include <gtest/gtest.h>

#include "tests/tir/schedule_test_util.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

TEST(SchedulePrimitives, SplitWithLiteralInferredAndSampledFactors) {
  CheckRoundTrip("gemm", kGemm, "", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    OK(s.Split(l[0], {std::monostate{}, int64_t{5}}));  // 24 = 5 * 5 - 1: a predicate
    auto t = OK(s.SamplePerfectTile(l[1], 3, 4));
    OK(s.Split(l[1], {t[0], t[1], t[2]}));
  }, "split");
}

TEST(SchedulePrimitives, ReorderAndFuse) {
  CheckRoundTrip("gemm", kGemm, "", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    OKV(s.Reorder({l[1], l[0]}));
    OK(s.Fuse({l[1], l[0]}));
  }, "fuse");
}

}  // namespace
}  // namespace autotune::tir
