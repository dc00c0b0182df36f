// The learned cost model: gradient-boosted trees (XGBoost, through its C API) on program features
// (costmodel/program_features.h). It learns from valid measurements only (a failed candidate is not a
// slow one), with each workload's latencies normalized to its best (label = best / latency, in
// (0, 1]), so workloads of different sizes train together; the pairwise objective compares records of
// one workload only. Until it has seen `warmup_records` valid measurements it does not steer: it
// ranks at random, unless a trained model was loaded. Retraining is from scratch on everything seen
// this job (the tuner also hands it the stored records of a task's workload when the task starts),
// and only when enough new data arrived (a quarter more than at the last training, at least
// `warmup_records` / 4 records). A loaded model stays as the base: what the job learns is trained on
// top of its predictions (XGBoost's base margin), so earlier jobs' knowledge is refined, not dropped.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/dedicated_thread.h"
#include "costmodel/cost_model.h"
#include "support/result.h"
#include "support/random.h"

namespace autotune::costmodel {

enum class Objective {
  kRegression,          // squared error on the normalized throughput
  kWeightedRegression,  // the same, each record weighted by its label: errors on fast ones cost more
  kPairwise,            // XGBoost's rank:pairwise within each workload
};
const char* ObjectiveName(Objective o);  // "regression", "weighted-regression", "pairwise"
std::optional<Objective> ParseObjective(const std::string& name);

struct XGBoostConfig {
  Objective objective = Objective::kWeightedRegression;  // ranked best on H200 records (docs/BENCHMARKS.md)
  // Half a round of 64, so that a first round with a few failed candidates still trains the model and
  // the rounds proposed after it are steered.
  int warmup_records = 32;
  int rounds = 80;          // boosting rounds per training
  int max_depth = 6;
  double learning_rate = 0.2;
  int threads = 0;          // XGBoost's nthread; 0: its default (every core)
  uint64_t seed = 1;
  std::string target;       // what the records were measured on ("cuda:sm_90"), kept in saved models
  // weighted-regression: every workload (group) weighs as much in all as any other, however many
  // records it has (else a workload of 16,000 records outweighs one of 60 by as much).
  bool balance_workloads = false;
};

// balance_workloads' row weights: each label scaled by (mean group size / its group's size), so that
// every group's rows count as many in all; `group_sizes` are runs of consecutive rows.
std::vector<float> BalancedWeights(const std::vector<float>& labels, const std::vector<unsigned>& group_sizes);

// What a saved model says about itself (attributes stored in XGBoost's JSON).
struct ModelInfo {
  std::string feature_version;
  std::string objective;
  std::string target;
  int64_t records = 0;
};

class XGBoostCostModel final : public CostModel {
 public:
  explicit XGBoostCostModel(XGBoostConfig config = {});
  ~XGBoostCostModel() override;
  XGBoostCostModel(const XGBoostCostModel&) = delete;
  XGBoostCostModel& operator=(const XGBoostCostModel&) = delete;

  std::string Name() const override { return "xgboost"; }
  bool Steers() const override { return trained(); }
  std::vector<double> Predict(const tir::Workload& workload, const std::vector<const tir::Schedule*>& candidates) override;
  // The program features (costmodel/program_features.h).
  std::vector<float> Summarize(const tir::PrimFunc& lowered) const override;
  std::vector<double> PredictSummarized(const tir::Workload& workload, const std::vector<const tir::Schedule*>& candidates,
                                        const std::vector<std::vector<float>>& summaries) override;
  void Update(const tir::Workload& workload, const std::vector<const tir::Schedule*>& candidates,
              const std::vector<std::optional<double>>& latencies_ms) override;

  // Whether predictions come from a model (trained here or loaded), else they are random.
  bool trained() const { return booster_ != nullptr || base_ != nullptr; }
  int64_t valid_records() const { return static_cast<int64_t>(latencies_.size()); }

  // Trains on explicit feature rows (one per record) and latencies, grouped by workload (each group's
  // latencies are normalized to its best): what `autotune model train` does with a database.
  Result<void> Train(const std::vector<std::vector<float>>& rows, const std::vector<double>& latencies_ms,
                     const std::vector<std::string>& groups);
  // Scores for feature rows (higher = predicted faster); random before training.
  std::vector<double> PredictRows(const std::vector<std::vector<float>>& rows);

  // The model trained here in XGBoost's own JSON format, with ModelInfo as attributes.
  Result<std::string> Save() const;
  // Loads a saved model as the base of this one; refused when its feature version is not this
  // build's (the features would mean something else).
  Result<ModelInfo> Load(const std::string& bytes);

 private:
  Result<void> Retrain();
  Result<void> RetrainHere();  // on xgboost_thread_
  Result<ModelInfo> LoadHere(const std::string& bytes);
  std::vector<double> RandomScores(size_t n);  // before training: no steering

  XGBoostConfig config_;
  void* booster_ = nullptr;  // BoosterHandle: trained on this job's data
  void* base_ = nullptr;     // BoosterHandle: loaded; booster_ learns on top of it
  Random rng_;
  // Everything seen: feature rows, latencies and each row's group (workload) for the normalization.
  std::vector<std::vector<float>> rows_;
  std::vector<double> latencies_;
  std::vector<std::string> groups_;
  size_t trained_on_ = 0;
  // Every XGBoost call runs here (see costmodel/dedicated_thread.h: why forking needs it).
  std::unique_ptr<DedicatedThread> xgboost_thread_ = std::make_unique<DedicatedThread>();
};

}  // namespace autotune::costmodel
