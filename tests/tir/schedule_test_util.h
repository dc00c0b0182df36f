// Shared by the schedule-primitive tests: workloads, the trace round trip every primitive must
// survive, and shorthands that fail the test on an error value.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tir/ops/operator.h"
#include "tir/schedule/schedule.h"

// The value of a Result-returning expression, failing the test (not aborting it) on an error.
#define OK(expr)                                  \
  ({                                              \
    auto r_ = (expr);                             \
    EXPECT_TRUE(r_) << #expr << ": " << (r_ ? "" : r_.error().message); \
    std::move(r_).value();                        \
  })
// The same for a step whose result is not needed.
#define OKV(expr)                                 \
  do {                                            \
    auto r_ = (expr);                             \
    EXPECT_TRUE(r_) << #expr << ": " << (r_ ? "" : r_.error().message); \
  } while (0)

namespace autotune::tir::testing {

// The gemm most schedule tests use; the error tests quote its 24 rows.
inline const std::string kGemm = "M=24,N=20,K=12";

Workload Make(const std::string& op, const std::string& shape, const std::string& epilogue = "");

// Builds a schedule with `build`, checks its trace has an instruction of `expect_kind`, round-trips
// the trace through JSON text, replays it on a freshly made workload and checks the lowered functions
// are structurally equal (and built anew).
void CheckRoundTrip(const std::string& op, const std::string& shape, const std::string& epilogue, TargetKind target,
                    const std::function<void(Schedule&)>& build, const std::string& expect_kind);

}  // namespace autotune::tir::testing
