// The two charts the report draws for a workload: best-so-far throughput against trial number, and
// against seconds since the workload's first record. Both carry a dashed line at kReachShare of the
// best, so where the curve crosses it can be read off against "trials to 90%" in the table.
#pragma once

#include "cli/report/svg_line_chart.h"
#include "cli/report/tuning_summary.h"

namespace autotune::cli::report {

LineChart TrialsChart(const WorkloadSummary& summary);
LineChart SecondsChart(const WorkloadSummary& summary);

// "gemm[M=64,N=64,K=64] on cuda:sm_90 (NVIDIA H200)": how the report names a row.
std::string WorkloadTitle(const WorkloadSummary& summary);

}  // namespace autotune::cli::report
