// A small tuning database for the lookup tests: real workloads and real traces (default and sampled
// schedules), with latencies that are test data, on a CPU target and two CUDA targets.
#pragma once

#include <string>

#include "db/record.h"
#include "support/result.h"
#include "tir/schedule/schedule.h"

namespace autotune::db::testing {

inline const TargetInfo kTestCpu{"cpu", "x86_64", "Test CPU", "", "cc (test) 12"};
inline const TargetInfo kTestH200{"cuda", "sm_90", "NVIDIA H200", "580.82", "13.0"};
inline const TargetInfo kTestA100{"cuda", "sm_80", "NVIDIA A100", "550.54", "12.4"};

// A valid record of `schedule` with the median `ms` (three repeats around it); the database tests
// (tests/db/db_test_util.h) make their records with it too.
TuningRecord MakeRecord(const tir::Schedule& schedule, const TargetInfo& target, double ms);
// Gives a valid record another median: its latencies and GFLOP/s follow, so it stays believable
// (db/record_check.h).
void SetMedian(TuningRecord& r, double ms);

// Writes the fixture into `path` (created; must not exist). What it holds, by (target, workload):
//  cpu:  gemm M=64,N=64,K=64 (3 valid records, fastest 0.2 ms, plus one WRONG_ANSWER record);
//        gemm M=128,N=128,K=128 (2); gemm M=256,N=256,K=64 (1); conv2d N=1,C=16,H=14,W=14,K=32,R=3,S=3,pad=1 (1);
//        add_rms_norm M=4,N=48 (1; two outputs)
//  cuda sm_90: gemm 256^3 (2, fastest 0.02 ms); gemm 1024^3 (1); conv2d resnet 56x56x64 3x3 (1)
//  cuda sm_80: gemm 256^3 (1, 0.03 ms)
Result<void> WriteLookupFixture(const std::string& path);

}  // namespace autotune::db::testing
