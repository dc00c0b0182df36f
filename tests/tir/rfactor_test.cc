// rfactor of a split reduction loop: recorded in the trace, replayed to the same lowered IR.
#include <gtest/gtest.h>

#include "tests/tir/schedule_test_util.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

TEST(SchedulePrimitives, RFactorOfASplitReduction) {
  CheckRoundTrip("gemm", "M=4,N=4,K=30", "", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    auto k = OK(s.Split(l[2], {std::monostate{}, int64_t{4}}));  // 30 = 8 * 4 - 2: predicated
    auto rf = OK(s.RFactor(C, k[1]));
    auto rl = OK(s.GetLoops(rf));
    OKV(s.Parallel(rl[0]));
  }, "rfactor");
}

}  // namespace
}  // namespace autotune::tir
