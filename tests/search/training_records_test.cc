// Training data read from a tuning database: valid records of the target only, each featurized as the
// search featurizes its candidates; failed records are counted, not learned, and records whose trace
// no longer replays are counted as stale.
#include "search/training_records.h"

#include <gtest/gtest.h>

#include "costmodel/program_features.h"
#include "tests/db/db_test_util.h"
#include "tir/lower/lower.h"

namespace autotune::search {
namespace {

using namespace autotune::db::testing;

TEST(TrainingData, ValidRecordsOfTheTargetFeaturizedAsTheSearchWould) {
  auto database = OpenNew("training_data.db");
  const tir::Workload gemm = Gemm("M=64,N=48,K=32");
  const tir::Workload bmm = *tir::MakeWorkload("batch_matmul", "B=2,M=32,N=32,K=16");
  std::vector<db::TuningRecord> records = DistinctRecords(gemm, CpuTarget(), 6);
  for (auto& r : DistinctRecords(bmm, CpuTarget(), 4)) records.push_back(r);
  records.push_back(MakeFailedRecord(gemm, 999, CpuTarget()));
  db::TuningRecord stale = MakeRecord(gemm, 1234, CpuTarget(), 2.0);
  stale.trace_json = R"({"insts":[{"kind":"no_such_primitive"}]})";
  stale.trace_hash = db::HashTraceJson(stale.trace_json);
  records.push_back(stale);
  auto cuda_schedule = search::DefaultSchedule(gemm, tir::TargetKind::kCuda);
  ASSERT_TRUE(cuda_schedule);
  records.push_back(MakeRecord(*cuda_schedule, CudaTarget(), 0.5));  // another target
  ASSERT_TRUE(database->CommitBatch(records));

  auto set = ReadTrainingSet(*database, {db::TargetQuery{"cpu", ""}, "", {}}, 2);
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(set->size(), 10u);
  EXPECT_EQ(set->NumGroups(), 2u);
  EXPECT_EQ(set->invalid_records, 1);
  EXPECT_EQ(set->stale_records, 1);
  // The first row is the first record's schedule, lowered and featurized.
  auto sch = search::RandomSchedule(gemm, tir::TargetKind::kCpu, 1);
  ASSERT_TRUE(sch);
  auto f = tir::Lower(sch->state());
  ASSERT_TRUE(f);
  EXPECT_EQ(set->rows[0], costmodel::ExtractFeatures(*f));
  EXPECT_EQ(set->latencies_ms[0], records[0].median_ms);

  auto only_bmm = ReadTrainingSet(*database, {db::TargetQuery{"cpu", ""}, "batch_matmul", {}}, 1);
  ASSERT_TRUE(only_bmm);
  EXPECT_EQ(only_bmm->size(), 4u);
  // Leaving the gemm workload out leaves its valid, failed and stale records all unread.
  auto without_gemm = ReadTrainingSet(*database, {db::TargetQuery{"cpu", ""}, "", {gemm.Key()}}, 1);
  ASSERT_TRUE(without_gemm);
  EXPECT_EQ(without_gemm->size(), 4u);
  EXPECT_EQ(without_gemm->NumGroups(), 1u);
  EXPECT_EQ(without_gemm->invalid_records + without_gemm->stale_records, 0);
  auto cuda = ReadTrainingSet(*database, {db::TargetQuery{"cuda", ""}, "", {}}, 1);
  ASSERT_TRUE(cuda);
  EXPECT_EQ(cuda->size(), 1u);
  EXPECT_EQ(cuda->invalid_records + cuda->stale_records, 0);
}

}  // namespace
}  // namespace autotune::search
