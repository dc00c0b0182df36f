// The learned cost model: gradient-boosted trees (XGBoost, through its C API) on program features
// (costmodel/program_features.h). It learns from valid measurements only (a failed candidate is not a
// slow one), with each workload's latencies normalized to its best (label = best / latency, in
// (0, 1]), so workloads of different sizes train together. Until it has seen `warmup_records` valid
// measurements (and no trained model was loaded) it does not steer: it ranks at random. Retraining
// is from scratch on everything seen, and only when enough new data arrived (a quarter more than at
// the last training, at least `warmup_records` / 4 records).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "search/cost_model.h"
#include "tir/result.h"
#include "tir/support/random.h"

namespace autotune::costmodel {

struct XGBoostConfig {
  int warmup_records = 64;
  int rounds = 80;          // boosting rounds per training
  int max_depth = 6;
  double learning_rate = 0.2;
  int threads = 0;          // XGBoost's nthread; 0: its default
  uint64_t seed = 1;
};

class XGBoostCostModel final : public search::CostModel {
 public:
  explicit XGBoostCostModel(XGBoostConfig config = {});
  ~XGBoostCostModel() override;
  XGBoostCostModel(const XGBoostCostModel&) = delete;
  XGBoostCostModel& operator=(const XGBoostCostModel&) = delete;

  std::string Name() const override { return "xgboost"; }
  std::vector<double> Predict(const tir::Workload& workload, const std::vector<const tir::Schedule*>& candidates) override;
  void Update(const tir::Workload& workload, const std::vector<const tir::Schedule*>& candidates,
              const std::vector<measure::MeasureResult>& results) override;

  // Whether predictions come from a trained model (else they are random).
  bool trained() const { return booster_ != nullptr; }
  int64_t valid_records() const { return static_cast<int64_t>(labels_.size()); }

  // Trains on explicit feature rows (one per record) and latencies, grouped by workload key: what
  // `autotune model train` does with a database. Errors come from XGBoost.
  Result<void> Train(const std::vector<std::vector<float>>& rows, const std::vector<double>& latencies_ms,
                     const std::vector<std::string>& workload_keys);
  // Scores for feature rows (higher = predicted faster); random before training.
  std::vector<double> PredictRows(const std::vector<std::vector<float>>& rows);

  // The trained model in XGBoost's own JSON format, and back. Load marks the model trained.
  Result<std::string> Save() const;
  Result<void> Load(const std::string& bytes);

 private:
  Result<void> Retrain();
  std::vector<double> RandomScores(size_t n);  // before training: no steering

  XGBoostConfig config_;
  void* booster_ = nullptr;  // BoosterHandle
  Random rng_;
  // Everything seen: feature rows, latencies and each row's workload key (for the normalization).
  std::vector<std::vector<float>> rows_;
  std::vector<double> latencies_;
  std::vector<std::string> keys_;
  std::vector<float> labels_;
  size_t trained_on_ = 0;
};

}  // namespace autotune::costmodel
