#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "search/default_schedule.h"
#include "search/thread_workload.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/structural_equal.h"

namespace autotune::search::thread_workload_test {
namespace {

tir::Workload Conv() {
  auto w = tir::MakeWorkload("conv2d", "N=2,C=16,H=9,W=9,K=32,R=3,S=3,pad=1", "bias,relu", "float16");
  EXPECT_TRUE(w.ok()) << w.error().message;
  return *w;
}

// The lowered program of the schedule sampled with `seed` (structural: variables by position).
size_t ProgramOf(const tir::Workload& w, uint64_t seed) {
  auto sch = RandomSchedule(w, tir::TargetKind::kCuda, seed);
  EXPECT_TRUE(sch.ok());
  if (!sch.ok()) return 0;
  auto f = tir::Lower(sch->state(), {});
  EXPECT_TRUE(f.ok()) << f.error().message;
  return f.ok() ? tir::StructuralHash(f->body) : 0;
}

TEST(ThreadWorkload, ARebuiltWorkloadIsTheSameWithNodesOfItsOwn) {
  const tir::Workload w = Conv();
  auto copy = RebuiltWorkload(w);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->KeyText(), w.KeyText());
  EXPECT_NE(copy->dag.get(), w.dag.get());
  for (uint64_t seed = 1; seed <= 8; ++seed) EXPECT_EQ(ProgramOf(*copy, seed), ProgramOf(w, seed)) << seed;
}

TEST(ThreadWorkload, OneCopyAThreadAndWorkload) {
  const tir::Workload w = Conv();
  const tir::Workload* here = &ThreadWorkload(w);
  EXPECT_NE(here, &w);
  EXPECT_EQ(&ThreadWorkload(w), here);  // kept for the next call
  const auto here_dag = here->dag;      // (the copy goes at the next workload)
  decltype(w.dag) there_dag;
  std::thread([&] { there_dag = ThreadWorkload(w).dag; }).join();
  EXPECT_NE(there_dag, here_dag);
  const tir::Workload other = Conv();  // another definition: another copy
  EXPECT_NE(ThreadWorkload(other).dag, here_dag);
  EXPECT_NE(ThreadWorkload(other).dag, other.dag);
  EXPECT_EQ(ThreadWorkload(other).KeyText(), w.KeyText());
}

TEST(ThreadWorkload, AWorkloadThatCannotBeRebuiltIsUsedItself) {
  tir::Workload w = Conv();
  w.op = "made_elsewhere";  // not an operator of the registry
  EXPECT_EQ(RebuiltWorkload(w), nullptr);
  EXPECT_EQ(&ThreadWorkload(w), &w);
}

}  // namespace
}  // namespace autotune::search::thread_workload_test
