// Summaries of tuning records: grouping by workload and target, best figures, trials to 90% of the
// best, span and rate from measured_at, and the best-so-far curves (failed trials count as trials
// but never raise a curve).
#include "cli/report/tuning_summary.h"

#include <gtest/gtest.h>

#include "cli/report/tuning_charts.h"

namespace autotune::cli::report {
namespace {

db::WorkloadInfo Workload(const std::string& key, const std::string& op = "gemm") {
  db::WorkloadInfo w;
  w.key = key;
  w.op = op;
  w.shape = {{"M", 64}, {"N", 64}, {"K", 64}};
  w.flops = 2.0 * 64 * 64 * 64;
  return w;
}

const db::TargetInfo kH200{"cuda", "sm_90", "NVIDIA H200", "580.82", "13.0"};

// A valid record of `gflops` (median from the workload's flops) measured at `at`.
db::TuningRecord Valid(const db::WorkloadInfo& w, double gflops, const std::string& at,
                       const db::TargetInfo& target = kH200) {
  db::TuningRecord r;
  r.workload = w;
  r.target = target;
  r.gflops = gflops;
  r.median_ms = w.flops / gflops * 1e-6;
  r.correct = true;
  r.measured_at = at;
  return r;
}

db::TuningRecord Failed(const db::WorkloadInfo& w, const std::string& at, const std::string& kind = "RUN_ERROR") {
  db::TuningRecord r = Valid(w, 1.0, at);
  r.error_kind = kind;
  r.correct = false;
  r.median_ms = 0;
  r.gflops = 0;
  return r;
}

// A record that ran and was timed but gave a wrong answer: it has a throughput and must not count.
db::TuningRecord WrongAnswer(const db::WorkloadInfo& w, double gflops, const std::string& at) {
  db::TuningRecord r = Valid(w, gflops, at);
  r.error_kind = "WRONG_ANSWER";
  r.correct = false;
  return r;
}

std::vector<WorkloadSummary> SummarizeAll(const std::vector<db::TuningRecord>& records) {
  TrialGrouper g;
  for (const auto& r : records) g.Add(r);
  std::vector<WorkloadSummary> out;
  for (const auto& t : g.Take()) out.push_back(Summarize(t));
  return out;
}

const char* T0 = "2026-11-29T10:00:00Z";

TEST(TuningSummary, BestTrialsToNinetyPercentAndCurveByTrial) {
  const auto w = Workload("aaa");
  // Trial:            1      2     3      4       5      6      7      8
  const auto s = SummarizeAll({Valid(w, 100, T0), Failed(w, T0), Valid(w, 400, T0), Valid(w, 300, T0),
                               Valid(w, 920, "2026-11-29T10:00:05Z"), Failed(w, "2026-11-29T10:00:05Z"),
                               Valid(w, 1000, "2026-11-29T10:00:09Z"), Valid(w, 10, "2026-11-29T10:00:10Z")});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].records, 8);
  EXPECT_EQ(s[0].valid, 6);
  EXPECT_DOUBLE_EQ(*s[0].best_gflops, 1000);
  EXPECT_DOUBLE_EQ(*s[0].best_ms, w.flops / 1000 * 1e-6);
  EXPECT_EQ(s[0].trials_to_reach, 5);  // 920 >= 0.9 * 1000 first at trial 5
  // Points where the best rose (trials 1, 3, 5, 7) and the closing point at the last trial.
  const std::vector<std::pair<double, double>> expected = {{1, 100}, {3, 400}, {5, 920}, {7, 1000}, {8, 1000}};
  ASSERT_EQ(s[0].by_trial.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(s[0].by_trial[i].x, expected[i].first) << i;
    EXPECT_EQ(s[0].by_trial[i].best_gflops, expected[i].second) << i;
    EXPECT_EQ(s[0].by_trial[i].improved, i + 1 < expected.size()) << i;
  }
}

TEST(TuningSummary, ExactlyNinetyPercentCountsAsReached) {
  const auto w = Workload("k");
  const auto s = SummarizeAll({Valid(w, 90, T0), Valid(w, 100, T0)});
  EXPECT_EQ(s[0].trials_to_reach, 1);
}

TEST(TuningSummary, InvalidRecordsCountAsTrialsButNeverRaiseTheCurve) {
  const auto w = Workload("bbb");
  // The wrong answer is "faster" than anything valid; the failures come first.
  const auto s = SummarizeAll({Failed(w, T0, "BUILD_ERROR"), Failed(w, T0), WrongAnswer(w, 5000, T0), Valid(w, 200, T0),
                               WrongAnswer(w, 9000, T0), Valid(w, 150, T0)});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].records, 6);
  EXPECT_EQ(s[0].valid, 2);
  EXPECT_DOUBLE_EQ(*s[0].best_gflops, 200);
  EXPECT_EQ(s[0].trials_to_reach, 4);  // trial numbers include the three invalid records before it
  ASSERT_EQ(s[0].by_trial.size(), 2u);
  EXPECT_EQ(s[0].by_trial[0].x, 4);
  EXPECT_EQ(s[0].by_trial[1].x, 6);
  for (const auto& p : s[0].by_trial) EXPECT_DOUBLE_EQ(p.best_gflops, 200);
}

TEST(TuningSummary, CurvesNeverFall) {
  const auto w = Workload("ccc");
  std::vector<db::TuningRecord> records;
  // A noisy sequence: ups, downs and failures, one second apart.
  const double gflops[] = {50, 40, 0, 70, 65, 0, 120, 80, 119, 121, 30, 0, 200, 199};
  for (int i = 0; i < 14; ++i) {
    const std::string at = "2026-11-29T10:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "Z";
    records.push_back(gflops[i] > 0 ? Valid(w, gflops[i], at) : Failed(w, at));
  }
  const auto s = SummarizeAll(records);
  for (const auto* curve : {&s[0].by_trial, &s[0].by_seconds}) {
    ASSERT_FALSE(curve->empty());
    for (size_t i = 1; i < curve->size(); ++i) {
      EXPECT_GE((*curve)[i].best_gflops, (*curve)[i - 1].best_gflops) << i;
      EXPECT_GE((*curve)[i].x, (*curve)[i - 1].x) << i;
    }
    EXPECT_DOUBLE_EQ(curve->back().best_gflops, 200);
  }
  EXPECT_EQ(s[0].by_trial.back().x, 14);
  EXPECT_EQ(s[0].by_seconds.back().x, 13);
}

TEST(TuningSummary, SpanAndRateComeFromMeasuredAtIncludingGaps) {
  const auto w = Workload("ddd");
  // Two runs: 10 s, then, an hour later, a resumed run of 20 s.
  const auto s = SummarizeAll({Valid(w, 10, "2026-11-29T10:00:00Z"), Valid(w, 20, "2026-11-29T10:00:10Z"),
                               Valid(w, 30, "2026-11-29T11:00:10Z"), Valid(w, 25, "2026-11-29T11:00:30Z")});
  EXPECT_DOUBLE_EQ(*s[0].span_s, 3630);
  EXPECT_DOUBLE_EQ(*s[0].candidates_per_s, 4.0 / 3630);
  const std::vector<std::pair<double, double>> expected = {{0, 10}, {10, 20}, {3610, 30}, {3630, 30}};
  ASSERT_EQ(s[0].by_seconds.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(s[0].by_seconds[i].x, expected[i].first) << i;
    EXPECT_EQ(s[0].by_seconds[i].best_gflops, expected[i].second) << i;
  }
}

TEST(TuningSummary, RecordsOfOneSecondHaveNoRateAndUnreadableTimesNoSpan) {
  const auto w = Workload("eee");
  const auto same = SummarizeAll({Valid(w, 10, T0), Valid(w, 20, T0)});
  EXPECT_DOUBLE_EQ(*same[0].span_s, 0);
  EXPECT_FALSE(same[0].candidates_per_s);
  ASSERT_EQ(same[0].by_seconds.size(), 2u);  // both at 0 s: the curve is a vertical step
  EXPECT_EQ(same[0].by_seconds[1].x, 0);

  const auto unreadable = SummarizeAll({Valid(w, 10, T0), Valid(w, 20, "yesterday")});
  EXPECT_FALSE(unreadable[0].span_s);
  EXPECT_FALSE(unreadable[0].candidates_per_s);
  EXPECT_TRUE(unreadable[0].by_seconds.empty());
  EXPECT_EQ(unreadable[0].by_trial.size(), 2u);  // the trial curve does not need times
  EXPECT_EQ(SecondsChart(unreadable[0]).empty_text, "measured_at of some records cannot be read");
}

TEST(TuningSummary, MergedRecordsOutOfTimeOrderAreWalkedByTime) {
  const auto w = Workload("fff");
  // Stored in this order (a merge appended an older machine's records), measured 10:00:20, :00, :10.
  const auto s = SummarizeAll({Valid(w, 300, "2026-11-29T10:00:20Z"), Valid(w, 100, "2026-11-29T10:00:00Z"),
                               Valid(w, 200, "2026-11-29T10:00:10Z")});
  EXPECT_DOUBLE_EQ(*s[0].span_s, 20);
  ASSERT_EQ(s[0].by_seconds.size(), 3u);
  EXPECT_EQ(s[0].by_seconds[0].x, 0);
  EXPECT_EQ(s[0].by_seconds[2].x, 20);
  EXPECT_EQ(s[0].by_seconds[2].best_gflops, 300);
  EXPECT_EQ(s[0].by_trial.size(), 2u);  // by trial, 300 came first: then nothing rose
}

TEST(TuningSummary, NoValidRecordMeansNoBestAndNoCurves) {
  const auto w = Workload("ggg");
  const auto s = SummarizeAll({Failed(w, T0), WrongAnswer(w, 50, T0)});
  EXPECT_EQ(s[0].records, 2);
  EXPECT_EQ(s[0].valid, 0);
  EXPECT_FALSE(s[0].best_ms);
  EXPECT_FALSE(s[0].best_gflops);
  EXPECT_FALSE(s[0].trials_to_reach);
  EXPECT_TRUE(s[0].by_trial.empty());
  EXPECT_TRUE(s[0].by_seconds.empty());
  EXPECT_EQ(TrialsChart(s[0]).empty_text, "no valid records");
  EXPECT_FALSE(TrialsChart(s[0]).reference_y);
}

TEST(TrialGrouper, GroupsByWorkloadAndTargetDeviceInFirstSeenOrder) {
  const auto a = Workload("a"), b = Workload("b", "conv2d");
  db::TargetInfo h200_new_driver = kH200;
  h200_new_driver.driver = "590.1";
  const db::TargetInfo a100{"cuda", "sm_80", "NVIDIA A100", "580.82", "13.0"};
  const auto s = SummarizeAll(
      {Valid(b, 5, T0), Valid(a, 10, T0), Valid(a, 30, T0, a100), Valid(a, 20, T0, h200_new_driver), Valid(b, 6, T0)});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].workload.key, "b");
  EXPECT_EQ(s[0].records, 2);
  EXPECT_EQ(s[1].workload.key, "a");
  EXPECT_EQ(s[1].target.arch, "sm_90");
  EXPECT_EQ(s[1].records, 2);  // a driver update continues the same curve
  EXPECT_DOUBLE_EQ(*s[1].best_gflops, 20);
  EXPECT_EQ(s[2].target.arch, "sm_80");
  EXPECT_EQ(s[2].records, 1);
}

TEST(TuningCharts, MarkImprovementsAndTheNinetyPercentLine) {
  const auto w = Workload("hhh");
  const auto s = SummarizeAll({Valid(w, 100, T0), Failed(w, T0), Valid(w, 400, "2026-11-29T10:00:03Z")});
  const LineChart trials = TrialsChart(s[0]);
  EXPECT_EQ(trials.points.size(), 2u);
  EXPECT_EQ(trials.markers.size(), 2u);
  EXPECT_TRUE(trials.steps);
  EXPECT_DOUBLE_EQ(*trials.reference_y, 360);
  EXPECT_EQ(trials.reference_label, "90% of best (360.0 GFLOP/s)");
  EXPECT_EQ(trials.x_max, 3);
  EXPECT_EQ(trials.x_min_step, 1);  // no tick at trial 0.5
  EXPECT_NE(trials.subtitle.find("gemm[M=64,N=64,K=64] on cuda:sm_90 (NVIDIA H200)"), std::string::npos);
  const LineChart seconds = SecondsChart(s[0]);
  EXPECT_EQ(seconds.x_max, 3);
  EXPECT_EQ(seconds.points.back().x, 3);
}

}  // namespace
}  // namespace autotune::cli::report
