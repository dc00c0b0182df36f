// What makes a record believable (db/record_check.h), and the places that apply it: import refuses,
// merge leaves out, the best-record queries skip.
#include "db/record_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "db/jsonl.h"
#include "db/merge.h"
#include "db/record_json.h"
#include "tests/db/db_test_util.h"

namespace autotune::db {
namespace {

using namespace autotune::db::testing;

// A record of gemm 16^3 whose trace splits loop i (16 iterations) by [16, 2^60 + 1, 1, 1]: the
// product wraps around 64 bits to 16, which once let a loop of 2^60 iterations pass.
TuningRecord OverflowingSplitRecord() {
  tir::Schedule s(Gemm("M=16,N=16,K=16"), tir::TargetKind::kCpu);
  auto C = s.GetStage("C");
  auto loops = s.GetLoops(*C);
  EXPECT_TRUE(s.Split((*loops)[0], {int64_t{16}, int64_t{1}, int64_t{1}, int64_t{1}}));
  TuningRecord r = MakeRecord(s, CpuTarget(), 1.0);
  nlohmann::json trace = nlohmann::json::parse(r.trace_json);
  for (auto& inst : trace["instructions"]) {
    if (inst["kind"] == "split") inst["inputs"][2] = (int64_t{1} << 60) + 1;
  }
  r.trace_json = trace.dump();
  r.trace_hash = HashTraceJson(r.trace_json);
  return r;
}

void ExpectRefused(const Result<void>& r, const std::string& why) {
  ASSERT_FALSE(r) << "accepted; expected: " << why;
  EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
}

TEST(RecordCheck, MeasuredRecordsPass) {
  RecordChecker checker;
  for (const TuningRecord& r : DistinctRecords(Gemm(), CpuTarget(), 3)) EXPECT_TRUE(checker.Check(r));
  EXPECT_TRUE(checker.Check(MakeFailedRecord(Gemm(), 7, CpuTarget())));
}

TEST(RecordCheck, NumbersThatContradictThemselvesAreRefused) {
  const TuningRecord good = MakeRecord(Gemm(), 1, CpuTarget(), 6.0);
  auto refused = [&](auto change, const std::string& why) {
    TuningRecord r = good;
    change(r);
    ExpectRefused(CheckRecordNumbers(r), why);
  };
  refused([](TuningRecord& r) { r.latencies_ms[0] = -5.9; }, "a latency is negative (-5.9)");
  refused([](TuningRecord& r) { SetMedian(r, -6.0); }, "is negative");
  refused([](TuningRecord& r) { r.median_ms = 1e-9; }, "median_ms 1e-09 is not the median of the 3 latencies (6)");
  refused([](TuningRecord& r) { r.gflops *= 1000; }, "is not the workload's FLOPs over the median");
  refused([](TuningRecord& r) { r.latencies_ms.clear(); }, "a valid record has no latencies");
  refused([](TuningRecord& r) { r.latencies_ms = {0, 0, 0}; r.median_ms = 0; }, "a latency of 0");
  refused([](TuningRecord& r) { r.max_rel_error = -1; }, "max_rel_error is negative");
  refused([](TuningRecord& r) { r.median_ms = NAN; }, "median_ms is not a finite number");
}

TEST(RecordCheck, ATraceThatDoesNotReplayIsRefused) {
  RecordChecker checker;
  ExpectRefused(checker.Check(OverflowingSplitRecord()), "exceeds the 16 iterations of loop i");
}

TEST(RecordCheck, ImportRefusesUnbelievableLinesAndStoresNothing) {
  TuningRecord negative = MakeRecord(Gemm(), 1, CpuTarget(), 6.0);
  SetMedian(negative, -6.0);
  TuningRecord median = MakeRecord(Gemm(), 2, CpuTarget(), 6.0);
  median.median_ms = 1e-9;
  for (const auto& [bad, why] : {std::pair{negative, std::string("line 2: a latency is negative")},
                                 std::pair{median, std::string("line 2: median_ms 1e-09 is not the median")},
                                 std::pair{OverflowingSplitRecord(), std::string("line 2: trace does not replay")}}) {
    std::stringstream lines;
    lines << *RecordToJsonLine(MakeRecord(Gemm(), 3, CpuTarget(), 2.0)) << "\n" << *RecordToJsonLine(bad) << "\n";
    auto db = OpenNew("import-unbelievable.db");
    auto counts = ImportJsonl(*db, lines);
    ASSERT_FALSE(counts);
    EXPECT_NE(counts.error().message.find(why), std::string::npos) << counts.error().message;
    EXPECT_TRUE(AllRecords(*db).empty());
  }
}

TEST(RecordCheck, MergeLeavesUnbelievableRecordsOut) {
  const std::string from = TempPath("merge-unbelievable-from.db");
  TuningRecord overflow = OverflowingSplitRecord();
  {
    auto db = TuningDatabase::Open(from);
    ASSERT_TRUE(db);
    // CommitBatch checks only what it needs to store: this is what a faulty tool could write.
    ASSERT_TRUE((*db)->CommitBatch({MakeRecord(Gemm(), 1, CpuTarget(), 2.0), overflow}));
  }
  auto into = OpenNew("merge-unbelievable-into.db");
  auto counts = MergeDatabase(*into, from);
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->read, 2);
  EXPECT_EQ(counts->added, 1);
  EXPECT_EQ(counts->refused, 1);
  EXPECT_NE(counts->first_refusal.find("record 2: trace does not replay"), std::string::npos) << counts->first_refusal;
}

TEST(RecordCheck, BestSkipsRecordsWhoseNumbersContradictThemselves) {
  auto db = OpenNew("best-unbelievable.db");
  auto records = DistinctRecords(Gemm(), CpuTarget(), 3);  // medians 1.0, 1.1, 1.2
  records[1].median_ms = 1e-9;                                // "fastest", against latencies of 1.1 ms
  SetMedian(records[2], 0.5);
  records[2].latencies_ms[0] = -0.5;                          // the fastest, but a negative latency
  ASSERT_TRUE(db->CommitBatch(records));
  auto best = db->Best(Gemm().Key(), TargetQuery{"cpu", ""}, 0);
  ASSERT_TRUE(best) << best.error().message;
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ((*best)[0].trace_hash, records[0].trace_hash);
  auto each = db->BestOfEachWorkload("gemm", TargetQuery{"cpu", ""}, 0);
  ASSERT_TRUE(each);
  ASSERT_EQ(each->size(), 1u);
  EXPECT_EQ((*each)[0].trace_hash, records[0].trace_hash);
}

}  // namespace
}  // namespace autotune::db
