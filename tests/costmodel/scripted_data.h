// A data set for cost-model tests: random cpu schedules of a workload whose "latency" is a fixed
// function of the program (its raw counts: loads per multiply-add, vector lanes, unrolled work) times
// +-5% of noise the features cannot explain, as measurements have. It tests that a model learns what
// the features carry; no timing is involved.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "costmodel/program_features.h"
#include "search/default_schedule.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "support/random.h"

namespace autotune::costmodel::testing {

struct Sample {
  tir::Schedule schedule;
  double latency_ms;
};

inline double ScriptedLatency(const tir::Schedule& sch) {
  auto f = tir::Lower(sch.state());
  EXPECT_TRUE(f);
  const ProgramCounts c = CountProgram(*f);
  const double macs = std::max(1.0, c.float_mul);
  return 1.0 + (c.global_loads / macs) * 3.0 + 2.0 / (1.0 + std::log2(1.0 + c.vectorized_lanes / macs * 64)) +
         (c.unrolled_iterations > macs ? 0.5 : 0.0);
}

inline std::vector<Sample> DataSet(const tir::Workload& w, uint64_t first_seed, int n) {
  std::vector<Sample> out;
  for (uint64_t seed = first_seed; static_cast<int>(out.size()) < n && seed < first_seed + 10 * n; ++seed) {
    auto sch = search::RandomSchedule(w, tir::TargetKind::kCpu, seed);
    if (!sch) continue;
    Random noise(seed * 7919);
    const double latency = ScriptedLatency(*sch) * (1.0 + 0.1 * (noise.UniformReal() - 0.5));
    out.push_back({std::move(*sch), latency});
  }
  return out;
}

// What the tuner tells the model about the samples: every one measured, at its latency.
inline std::vector<std::optional<double>> Latencies(const std::vector<Sample>& samples) {
  std::vector<std::optional<double>> out;
  for (const auto& x : samples) out.push_back(x.latency_ms);
  return out;
}

inline std::vector<const tir::Schedule*> Ptrs(const std::vector<Sample>& s) {
  std::vector<const tir::Schedule*> out;
  for (const auto& x : s) out.push_back(&x.schedule);
  return out;
}

inline std::vector<std::vector<float>> Rows(const std::vector<Sample>& s) {
  std::vector<std::vector<float>> out;
  for (const auto& x : s) {
    auto f = tir::Lower(x.schedule.state());
    EXPECT_TRUE(f);
    out.push_back(ExtractFeatures(*f));
  }
  return out;
}

}  // namespace autotune::costmodel::testing
