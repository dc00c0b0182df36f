// The primitives that change a loop's kind or annotation (parallel, vectorize, unroll,
// annotate_unroll, bind): each is recorded in the trace, and the trace replays to the same lowered IR.
#include <gtest/gtest.h>

#include "tests/tir/schedule_test_util.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

TEST(SchedulePrimitives, ParallelVectorizeUnrollAnnotate) {
  CheckRoundTrip("gemm", kGemm, "", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    auto j = OK(s.Split(l[1], {std::monostate{}, int64_t{4}}));
    OKV(s.Reorder({l[0], j[0], l[2], j[1]}));
    OKV(s.Parallel(l[0]));
    OKV(s.Vectorize(j[1]));
    OKV(s.Unroll(j[0]));
    auto u = OK(s.SampleCategorical({0, 16, 64}, {0.2, 0.3, 0.5}));
    OKV(s.AnnotateUnroll(l[0], u));
  }, "annotate_unroll");
}

TEST(SchedulePrimitives, BindEveryThreadTag) {
  CheckRoundTrip("batch_matmul", "B=2,M=8,N=8,K=4", "", TargetKind::kCuda, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    auto i = OK(s.Split(l[1], {int64_t{2}, int64_t{2}, int64_t{2}}));
    auto j = OK(s.Split(l[2], {int64_t{2}, int64_t{2}, int64_t{2}}));
    OKV(s.Reorder({l[0], i[0], j[0], i[1], j[1], i[2], j[2]}));
    OKV(s.Bind(l[0], ThreadTag::kBlockIdxZ));
    OKV(s.Bind(i[0], ThreadTag::kBlockIdxY));
    OKV(s.Bind(j[0], ThreadTag::kBlockIdxX));
    OKV(s.Bind(i[1], ThreadTag::kVThread));
    OKV(s.Bind(j[1], ThreadTag::kThreadIdxZ));
    OKV(s.Bind(i[2], ThreadTag::kThreadIdxY));
    OKV(s.Bind(j[2], ThreadTag::kThreadIdxX));
  }, "bind");
}

}  // namespace
}  // namespace autotune::tir
