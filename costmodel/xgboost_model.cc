#include "costmodel/xgboost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "costmodel/program_features.h"
#include "tir/lower/lower.h"
#include "tir/support/parallel_for.h"

namespace autotune::costmodel {
namespace {

Error XgbError(const char* what) { return MakeError(fmt::format("XGBoost {}: {}", what, XGBGetLastError())); }

// A dense float matrix as an XGBoost DMatrix, freed on scope exit.
class Matrix {
 public:
  Matrix() = default;
  ~Matrix() {
    if (handle_) XGDMatrixFree(handle_);
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  Result<void> Fill(const std::vector<std::vector<float>>& rows) {
    const size_t cols = FeatureNames().size();
    std::vector<float> flat;
    flat.reserve(rows.size() * cols);
    for (const auto& r : rows) {
      if (r.size() != cols) return MakeError(fmt::format("a feature row has {} values, not {}", r.size(), cols));
      flat.insert(flat.end(), r.begin(), r.end());
    }
    if (XGDMatrixCreateFromMat(flat.data(), rows.size(), cols, std::numeric_limits<float>::quiet_NaN(), &handle_) != 0) {
      return XgbError("DMatrix");
    }
    return {};
  }
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

// The features of a candidate, or nullopt-like empty when it does not lower.
std::vector<float> FeaturesOf(const tir::Schedule& sch) {
  auto f = tir::Lower(sch.state());
  if (!f) return {};
  return ExtractFeatures(*f);
}

// label = best latency of the row's workload / its latency.
std::vector<float> NormalizedThroughput(const std::vector<double>& latencies, const std::vector<std::string>& keys) {
  std::map<std::string, double> best;
  for (size_t i = 0; i < latencies.size(); ++i) {
    auto [it, fresh] = best.emplace(keys[i], latencies[i]);
    if (!fresh) it->second = std::min(it->second, latencies[i]);
  }
  std::vector<float> labels(latencies.size());
  for (size_t i = 0; i < latencies.size(); ++i) labels[i] = static_cast<float>(best[keys[i]] / latencies[i]);
  return labels;
}

}  // namespace

XGBoostCostModel::XGBoostCostModel(XGBoostConfig config)
    : config_(config), rng_(config.seed) {}

std::vector<double> XGBoostCostModel::RandomScores(size_t n) {
  std::vector<double> out(n);
  for (double& x : out) x = rng_.UniformReal();
  return out;
}

XGBoostCostModel::~XGBoostCostModel() {
  if (booster_) XGBoosterFree(static_cast<BoosterHandle>(booster_));
}

std::vector<double> XGBoostCostModel::Predict(const tir::Workload& workload,
                                              const std::vector<const tir::Schedule*>& candidates) {
  (void)workload;  // the features say everything the model uses
  if (!booster_) return RandomScores(candidates.size());
  // Lowering for the features is the cost: spread it over the cores (each candidate is independent).
  std::vector<std::vector<float>> all(candidates.size());
  tir::ParallelFor(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), candidates.size(),
                   [&](size_t i) { all[i] = FeaturesOf(*candidates[i]); });
  std::vector<std::vector<float>> rows;
  std::vector<size_t> which;  // rows[k] is candidates[which[k]]
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (all[i].empty()) continue;
    rows.push_back(std::move(all[i]));
    which.push_back(i);
  }
  std::vector<double> scores(candidates.size(), -std::numeric_limits<double>::infinity());
  const std::vector<double> predicted = PredictRows(rows);
  for (size_t k = 0; k < which.size() && k < predicted.size(); ++k) scores[which[k]] = predicted[k];
  return scores;
}

std::vector<double> XGBoostCostModel::PredictRows(const std::vector<std::vector<float>>& rows) {
  if (rows.empty()) return {};
  if (!booster_) return RandomScores(rows.size());
  Matrix m;
  if (!m.Fill(rows)) return std::vector<double>(rows.size(), 0.0);
  bst_ulong len = 0;
  const float* out = nullptr;
  if (XGBoosterPredict(static_cast<BoosterHandle>(booster_), m.get(), 0, 0, 0, &len, &out) != 0 ||
      len != rows.size()) {
    return std::vector<double>(rows.size(), 0.0);
  }
  return std::vector<double>(out, out + len);
}

void XGBoostCostModel::Update(const tir::Workload& workload, const std::vector<const tir::Schedule*>& candidates,
                              const std::vector<measure::MeasureResult>& results) {
  const std::string key = workload.Key();
  for (size_t i = 0; i < candidates.size() && i < results.size(); ++i) {
    const auto& r = results[i];
    if (!r.ok() || !r.correct || !(r.median_ms > 0)) continue;  // failures are not slow candidates
    auto f = FeaturesOf(*candidates[i]);
    if (f.empty()) continue;
    rows_.push_back(std::move(f));
    latencies_.push_back(r.median_ms);
    keys_.push_back(key);
  }
  labels_ = NormalizedThroughput(latencies_, keys_);
  const size_t n = labels_.size();
  const size_t warm = static_cast<size_t>(std::max(1, config_.warmup_records));
  const size_t enough_new = std::max<size_t>(warm / 4, trained_on_ / 4);
  if (n >= warm && n >= trained_on_ + enough_new) (void)Retrain();
}

Result<void> XGBoostCostModel::Train(const std::vector<std::vector<float>>& rows,
                                     const std::vector<double>& latencies_ms,
                                     const std::vector<std::string>& workload_keys) {
  if (rows.size() != latencies_ms.size() || rows.size() != workload_keys.size()) {
    return MakeError("training data: rows, latencies and workload keys differ in number");
  }
  rows_ = rows;
  latencies_ = latencies_ms;
  keys_ = workload_keys;
  labels_ = NormalizedThroughput(latencies_, keys_);
  return Retrain();
}

Result<void> XGBoostCostModel::Retrain() {
  if (rows_.empty()) return MakeError("no valid records to train on");
  Matrix m;
  if (auto r = m.Fill(rows_); !r) return r;
  if (XGDMatrixSetFloatInfo(m.get(), "label", labels_.data(), labels_.size()) != 0) return XgbError("labels");
  BoosterHandle b = nullptr;
  DMatrixHandle dm = m.get();
  if (XGBoosterCreate(&dm, 1, &b) != 0) return XgbError("booster");
  const std::vector<std::pair<std::string, std::string>> params = {
      {"objective", "reg:squarederror"},
      {"tree_method", "hist"},
      {"max_depth", std::to_string(config_.max_depth)},
      {"eta", fmt::format("{}", config_.learning_rate)},
      {"seed", std::to_string(config_.seed)},
      {"verbosity", "0"},
  };
  for (const auto& [k, v] : params) {
    if (XGBoosterSetParam(b, k.c_str(), v.c_str()) != 0) {
      XGBoosterFree(b);
      return XgbError("parameter");
    }
  }
  if (config_.threads > 0) XGBoosterSetParam(b, "nthread", std::to_string(config_.threads).c_str());
  for (int i = 0; i < config_.rounds; ++i) {
    if (XGBoosterUpdateOneIter(b, i, dm) != 0) {
      XGBoosterFree(b);
      return XgbError("training");
    }
  }
  if (booster_) XGBoosterFree(static_cast<BoosterHandle>(booster_));
  booster_ = b;
  trained_on_ = rows_.size();
  return {};
}

Result<std::string> XGBoostCostModel::Save() const {
  if (!booster_) return MakeError("the model is not trained");
  bst_ulong len = 0;
  const char* data = nullptr;
  if (XGBoosterSaveModelToBuffer(static_cast<BoosterHandle>(booster_), R"({"format": "json"})", &len, &data) != 0) {
    return XgbError("save");
  }
  return std::string(data, len);
}

Result<void> XGBoostCostModel::Load(const std::string& bytes) {
  BoosterHandle b = nullptr;
  if (XGBoosterCreate(nullptr, 0, &b) != 0) return XgbError("booster");
  if (XGBoosterLoadModelFromBuffer(b, bytes.data(), bytes.size()) != 0) {
    XGBoosterFree(b);
    return XgbError("load");
  }
  if (booster_) XGBoosterFree(static_cast<BoosterHandle>(booster_));
  booster_ = b;
  return {};
}

}  // namespace autotune::costmodel
