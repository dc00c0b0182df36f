// The cost model interface: ranks candidates so that only the promising few are measured. The learned
// XGBoost model (costmodel/, issue 6) implements it; until then, RandomCostModel ranks at random.
// Batched: one call scores a whole generation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "measure/measure_result.h"
#include "tir/ops/workload.h"
#include "tir/schedule/schedule.h"
#include "tir/support/random.h"

namespace autotune::search {

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string Name() const = 0;
  // One score per candidate, higher = predicted faster. Scores are comparable within one call.
  virtual std::vector<double> Predict(const tir::Workload& workload, const std::vector<const tir::Schedule*>& candidates) = 0;
  // Learns from a measured batch: results[i] is candidates[i]'s (failed ones included).
  virtual void Update(const tir::Workload& workload, const std::vector<const tir::Schedule*>& candidates,
                      const std::vector<measure::MeasureResult>& results) = 0;
};

// Uniform random scores from its own seeded engine (deterministic for a seed); Update does nothing.
std::unique_ptr<CostModel> MakeRandomCostModel(uint64_t seed);

}  // namespace autotune::search
