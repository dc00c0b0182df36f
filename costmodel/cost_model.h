// The cost model interface: ranks candidates so that only the promising few are measured. The learned
// XGBoost model (costmodel/) implements it; RandomCostModel ranks at random. Batched: one call scores
// a whole generation. A model that learns from the lowered program says so through Summarize: the
// search lowers every candidate anyway (to check it), and hands the summaries to Predict, so a
// candidate is not lowered a second time for the model.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tir/ops/workload.h"
#include "tir/prim_func.h"
#include "tir/schedule/schedule.h"
#include "support/random.h"

namespace autotune::costmodel {

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string Name() const = 0;
  // One score per candidate, higher = predicted faster. Scores are comparable within one call.
  virtual std::vector<double> Predict(const tir::Workload& workload, const std::vector<const tir::Schedule*>& candidates) = 0;
  // What the model needs from a candidate's lowered program (empty: nothing). Pure and thread-safe:
  // the search calls it on its worker threads.
  virtual std::vector<float> Summarize(const tir::PrimFunc& lowered) const {
    (void)lowered;
    return {};
  }
  // Predict, given summaries[i] = Summarize(lowered candidates[i]) (an empty one: not at hand).
  virtual std::vector<double> PredictSummarized(const tir::Workload& workload,
                                                const std::vector<const tir::Schedule*>& candidates,
                                                const std::vector<std::vector<float>>& summaries) {
    (void)summaries;
    return Predict(workload, candidates);
  }
  // Whether the scores carry information yet. A model that ranks at random (RandomCostModel, an
  // XGBoost model before it has trained) says false, and a search with no measured schedule to start
  // from then evolves a smaller population (search/evolutionary_search.cc: why not none).
  virtual bool Steers() const { return true; }
  // Learns from a measured batch: latencies_ms[i] is candidates[i]'s median latency, nullopt when it
  // failed or computed a wrong answer (a failure is not a slow candidate).
  virtual void Update(const tir::Workload& workload, const std::vector<const tir::Schedule*>& candidates,
                      const std::vector<std::optional<double>>& latencies_ms) = 0;
};

// Uniform random scores from its own seeded engine (deterministic for a seed); Update does nothing.
std::unique_ptr<CostModel> MakeRandomCostModel(uint64_t seed);

}  // namespace autotune::costmodel
