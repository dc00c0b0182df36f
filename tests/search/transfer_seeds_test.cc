// Which stored records seed a new shape's search (search/transfer_seeds.h): the same operator and
// element type only, never the shape itself or a failed record, the same epilogue before another, the
// nearest shapes first, each shape's fastest record before anyone's second, and traces that do not
// parse left out.
#include "search/transfer_seeds.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "search/default_schedule.h"
#include "search/measure_record.h"
#include "tir/ops/operator.h"

namespace autotune::search {
namespace {

db::TargetInfo Cpu() { return {"cpu", "x86_64", "Test CPU", "", "cc (test) 12.2"}; }

db::TuningRecord Record(const std::string& op, const std::string& shape, const std::string& epilogue, double ms,
                        bool correct = true, const std::string& dtype = "float32") {
  auto w = tir::MakeWorkload(op, shape, epilogue, dtype);
  EXPECT_TRUE(w) << w.error().message;
  auto sch = DefaultSchedule(*w, tir::TargetKind::kCpu);
  EXPECT_TRUE(sch);
  measure::MeasureResult result;
  if (correct) {
    result.latencies_ms = {ms};
    result.median_ms = ms;
    result.correct = true;
  } else {
    result = measure::MeasureResult::Error(measure::ErrorKind::kWrongAnswer, "scripted");
  }
  return MakeTuningRecord(*w, sch->trace(), Cpu(), result, nullptr);
}

std::vector<std::string> Sources(const std::vector<TransferredSchedule>& seeds) {
  std::vector<std::string> out;
  for (const auto& s : seeds) out.push_back(s.from + "@" + std::to_string(s.from_ms));
  return out;
}

TEST(TransferSeeds, NearestShapesFirstEachShapesFastestFirstTheSameEpilogueBeforeAnother) {
  auto w = tir::MakeWorkload("gemm", "M=64,N=64,K=64", "");
  ASSERT_TRUE(w);
  std::vector<db::TuningRecord> records = {
      Record("gemm", "M=64,N=64,K=64", "", 0.1),          // the shape itself
      Record("gemm", "M=64,N=64,K=128", "", 0.4),         // distance log 2
      Record("gemm", "M=64,N=64,K=128", "", 0.3),         //   its fastest
      Record("gemm", "M=256,N=64,K=64", "", 0.2),         // log 4
      Record("gemm", "M=256,N=256,K=64", "", 0.2),        // log 16
      Record("gemm", "M=256,N=256,K=256", "", 0.2),       // log 64: the fifth shape, left out
      Record("gemm", "M=64,N=64,K=64", "relu", 0.2),      // distance 0, but another epilogue
      Record("gemm", "M=64,N=64,K=32", "", 0.01, false),  // failed: never a seed
      Record("conv2d", "N=1,C=8,H=8,W=8,K=8,R=3,S=3,pad=1", "", 0.1),
  };
  auto broken = Record("gemm", "M=64,N=64,K=96", "", 0.05);  // the nearest shape's record, unreadable
  broken.trace_json = "{not json";
  records.push_back(broken);
  const auto seeds = NearestShapeSchedules(*w, tir::TargetKind::kCpu, records);
  EXPECT_EQ(Sources(seeds), (std::vector<std::string>{
                                "gemm[M=64,N=64,K=128]@0.300000", "gemm[M=256,N=64,K=64]@0.200000",
                                "gemm[M=256,N=256,K=64]@0.200000",  // the nearest shape (K=96): unreadable
                                "gemm[M=64,N=64,K=128]@0.400000"}));
  for (const auto& s : seeds) EXPECT_EQ(s.schedule.workload().Key(), w->Key());
}

// A float16 task learns from float16 records only, however near a float32 shape is.
TEST(TransferSeeds, OnlyRecordsOfTheSameElementType) {
  auto w = tir::MakeWorkload("gemm", "M=64,N=64,K=64", "", "float16");
  ASSERT_TRUE(w);
  const auto seeds = NearestShapeSchedules(*w, tir::TargetKind::kCpu,
                                           {Record("gemm", "M=64,N=64,K=96", "", 0.1),
                                            Record("gemm", "M=256,N=64,K=64", "", 0.2, true, "float16"),
                                            Record("gemm", "M=64,N=64,K=128", "", 0.1, true, "bfloat16")});
  EXPECT_EQ(Sources(seeds), (std::vector<std::string>{"gemm[M=256,N=64,K=64]:float16@0.200000"}));
}

TEST(TransferSeeds, NoRecordsOfTheOperatorNoSeeds) {
  auto w = tir::MakeWorkload("batch_matmul", "B=2,M=16,N=16,K=16", "");
  ASSERT_TRUE(w);
  EXPECT_TRUE(NearestShapeSchedules(*w, tir::TargetKind::kCpu, {Record("gemm", "M=16,N=16,K=16", "", 0.1)}).empty());
}

}  // namespace
}  // namespace autotune::search
