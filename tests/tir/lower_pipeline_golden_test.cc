// Golden text (golden/gemm_gpu_*.tir) of the main lowering steps for a GPU-style schedule. Review a
// diff of those files like a code change: the text is what codegen and the cost model see.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/tir/golden.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/printer.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {
namespace {

using autotune::tir::testing::ExpectGolden;

// The text after each lowering step of a schedule with every feature: a local accumulator
// (cache_write), a shared-memory copy loaded cooperatively by the block's threads, a virtual thread,
// a fused epilogue and partial tiles.
std::map<std::string, std::string> LowerSteps() {
  auto w = MakeWorkload("gemm", "M=8,N=6,K=4", "relu");
  EXPECT_TRUE(w);
  Schedule s(*w, TargetKind::kCuda);
  auto C = *s.GetStage("C");
  auto local = *s.CacheWrite(C, Scope::kLocal);
  auto As = *s.CacheReadInput("A", Scope::kShared, {local});
  auto E = *s.GetStage("C_relu");
  EXPECT_TRUE(s.ReverseComputeInline(E));
  auto l = *s.GetLoops(C);
  auto i = *s.Split(l[0], {int64_t{2}, int64_t{2}, int64_t{2}});
  auto j = *s.Split(l[1], {std::monostate{}, int64_t{3}});
  EXPECT_TRUE(s.Reorder({i[0], i[1], j[0], i[2], j[1]}));
  EXPECT_TRUE(s.Bind(i[0], ThreadTag::kBlockIdxX));
  EXPECT_TRUE(s.Bind(i[1], ThreadTag::kVThread));
  auto tx = *s.Fuse({j[0], i[2]});
  EXPECT_TRUE(s.Bind(tx, ThreadTag::kThreadIdxX));
  EXPECT_TRUE(s.ComputeAt(local, tx));
  auto ll = *s.GetLoops(local);
  auto k = *s.Split(ll[2], {std::monostate{}, int64_t{2}});
  EXPECT_TRUE(s.Reorder({k[0], ll[0], ll[1], k[1]}));
  EXPECT_TRUE(s.ComputeAt(As, k[0]));
  auto al = *s.GetLoops(As);
  auto f = *s.Fuse({al[0], al[1]});
  auto parts = *s.Split(f, {std::monostate{}, int64_t{4}});
  EXPECT_TRUE(s.Bind(parts[1], ThreadTag::kThreadIdxX));
  std::map<std::string, std::string> steps;
  LowerOptions opt;
  opt.dump = [&](const std::string& step, const PrimFunc& f) { steps[step] = ToString(f.body); };
  auto r = Lower(s.state(), opt);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return steps;
}

TEST(LowerPipelineGolden, ScheduleOps) {
  ExpectGolden(LowerSteps().at("schedule_ops"), "gemm_gpu_schedule_ops.tir");
}

TEST(LowerPipelineGolden, InjectVirtualThread) {
  ExpectGolden(LowerSteps().at("inject_virtual_thread"), "gemm_gpu_inject_virtual_thread.tir");
}

TEST(LowerPipelineGolden, InsertBarriers) {
  ExpectGolden(LowerSteps().at("insert_barriers"), "gemm_gpu_insert_barriers.tir");
}

TEST(LowerPipelineGolden, FinalSimplify) {
  ExpectGolden(LowerSteps().at("final_simplify"), "gemm_gpu_final_simplify.tir");
}

TEST(LowerPipelineGolden, StepsRunInOrder) {
  std::vector<std::string> order;
  auto w = MakeWorkload("gemm", "M=4,N=4,K=4");
  ASSERT_TRUE(w);
  Schedule s(*w, TargetKind::kCpu);
  LowerOptions opt;
  opt.dump = [&](const std::string& step, const PrimFunc&) { order.push_back(step); };
  ASSERT_TRUE(Lower(s.state(), opt));
  EXPECT_EQ(order, (std::vector<std::string>{"schedule_ops", "simplify", "inject_virtual_thread", "lift_shared_allocations",
                                             "storage_flatten", "insert_barriers", "pipeline_copies", "pipeline_fragments",
                                             "unroll_loops", "final_simplify"}));
}

// A shared copy computed per tile of 4 rows: its rows run past the tensor in the last tile of 10
// rows, so the copy keeps the guard there; with 8 rows the loop ranges prove it, and it is left out.
std::string TileCopyAtScheduleOps(int64_t rows) {
  auto w = MakeWorkload("gemm", "M=" + std::to_string(rows) + ",N=4,K=4", "");
  EXPECT_TRUE(w);
  Schedule s(*w, TargetKind::kCuda);
  auto C = *s.GetStage("C");
  auto As = *s.CacheReadInput("A", Scope::kShared, {C});
  auto i = *s.Split((*s.GetLoops(C))[0], {std::monostate{}, int64_t{4}});
  EXPECT_TRUE(s.ComputeAt(As, i[0]));
  std::string text;
  LowerOptions opt;
  opt.dump = [&](const std::string& step, const PrimFunc& f) {
    if (step == "schedule_ops") text = ToString(f.body);
  };
  EXPECT_TRUE(Lower(s.state(), opt));
  return text;
}

TEST(LowerPipelineGolden, AnAttachedCopyIsGuardedOnlyWhereItsTileReachesPastTheTensor) {
  const std::string partial = TileCopyAtScheduleOps(10);
  EXPECT_NE(partial.find(R"(        if (((i_0 * 4) + ax0) < 10) {
          A_shared[ax0, ax1] = A[((i_0 * 4) + ax0), ax1]
        })"),
            std::string::npos)
      << partial;
  const std::string whole = TileCopyAtScheduleOps(8);
  EXPECT_NE(whole.find("      for (ax1: int32, 0, 4) serial {\n        A_shared[ax0, ax1] = A[((i_0 * 4) + ax0), ax1]\n"),
            std::string::npos)
      << whole;
  EXPECT_EQ(whole.find("if ("), std::string::npos) << whole;
}

}  // namespace
}  // namespace autotune::tir
