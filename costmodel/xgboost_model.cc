#include "costmodel/xgboost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "costmodel/program_features.h"
#include "tir/lower/lower.h"
#include "support/parallel_for.h"

namespace autotune::costmodel {
namespace {

Error XgbError(const char* what) { return MakeError(fmt::format("XGBoost {}: {}", what, XGBGetLastError())); }

BoosterHandle AsBooster(void* p) { return static_cast<BoosterHandle>(p); }

// A dense float matrix as an XGBoost DMatrix, freed on scope exit.
class Matrix {
 public:
  Matrix() = default;
  ~Matrix() {
    if (handle_) XGDMatrixFree(handle_);
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  // rows[order[0]], rows[order[1]], ... (all rows in their order when `order` is empty).
  Result<void> Fill(const std::vector<std::vector<float>>& rows, const std::vector<size_t>& order = {}) {
    const size_t cols = FeatureNames().size();
    const size_t n = order.empty() ? rows.size() : order.size();
    std::vector<float> flat;
    flat.reserve(n * cols);
    for (size_t i = 0; i < n; ++i) {
      const auto& r = rows[order.empty() ? i : order[i]];
      if (r.size() != cols) return MakeError(fmt::format("a feature row has {} values, not {}", r.size(), cols));
      flat.insert(flat.end(), r.begin(), r.end());
    }
    if (XGDMatrixCreateFromMat(flat.data(), n, cols, std::numeric_limits<float>::quiet_NaN(), &handle_) != 0) {
      return XgbError("DMatrix");
    }
    return {};
  }
  Result<void> SetFloats(const char* field, const std::vector<float>& values) {
    if (XGDMatrixSetFloatInfo(handle_, field, values.data(), values.size()) != 0) return XgbError(field);
    return {};
  }
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

// A booster's raw scores (margins) for the matrix's rows.
Result<std::vector<float>> Margins(void* booster, const Matrix& m, size_t n) {
  bst_ulong len = 0;
  const float* out = nullptr;
  if (XGBoosterPredict(AsBooster(booster), m.get(), /*option_mask=output margin*/ 1, 0, 0, &len, &out) != 0) {
    return XgbError("prediction");
  }
  if (len != n) return MakeError(fmt::format("XGBoost predicted {} values for {} rows", len, n));
  return std::vector<float>(out, out + len);
}

// Scores of `booster` for the rows, on top of `base`'s when there is one.
Result<std::vector<float>> Scores(void* booster, void* base, const std::vector<std::vector<float>>& rows,
                                  const std::vector<size_t>& order = {}) {
  Matrix m;
  AT_TRY_VOID(m.Fill(rows, order));
  const size_t n = order.empty() ? rows.size() : order.size();
  if (base == nullptr) return Margins(booster, m, n);
  AT_TRY(base_margin, Margins(base, m, n));
  if (booster == nullptr) return base_margin;
  AT_TRY_VOID(m.SetFloats("base_margin", base_margin));
  return Margins(booster, m, n);
}

// The features of a candidate, or empty when it does not lower.
std::vector<float> FeaturesOf(const tir::Schedule& sch) {
  auto f = tir::Lower(sch.state(), FeatureLowering());
  if (!f) return {};
  return ExtractFeatures(*f);
}

// label = best latency of the row's group / its latency.
std::vector<float> NormalizedThroughput(const std::vector<double>& latencies, const std::vector<std::string>& groups) {
  std::map<std::string, double> best;
  for (size_t i = 0; i < latencies.size(); ++i) {
    auto [it, fresh] = best.emplace(groups[i], latencies[i]);
    if (!fresh) it->second = std::min(it->second, latencies[i]);
  }
  std::vector<float> labels(latencies.size());
  for (size_t i = 0; i < latencies.size(); ++i) labels[i] = static_cast<float>(best[groups[i]] / latencies[i]);
  return labels;
}

constexpr const char* kAttrFeatures = "autotune_feature_version";
constexpr const char* kAttrObjective = "autotune_objective";
constexpr const char* kAttrTarget = "autotune_target";
constexpr const char* kAttrRecords = "autotune_records";

std::string Attr(BoosterHandle b, const char* key) {
  const char* out = nullptr;
  int found = 0;
  if (XGBoosterGetAttr(b, key, &out, &found) != 0 || !found || out == nullptr) return "";
  return out;
}

}  // namespace

const char* ObjectiveName(Objective o) {
  switch (o) {
    case Objective::kRegression: return "regression";
    case Objective::kWeightedRegression: return "weighted-regression";
    case Objective::kPairwise: return "pairwise";
  }
  return "?";
}

std::optional<Objective> ParseObjective(const std::string& name) {
  for (auto o : {Objective::kRegression, Objective::kWeightedRegression, Objective::kPairwise}) {
    if (name == ObjectiveName(o)) return o;
  }
  return std::nullopt;
}

XGBoostCostModel::XGBoostCostModel(XGBoostConfig config)
    : config_(std::move(config)), rng_(config_.seed) {}

XGBoostCostModel::~XGBoostCostModel() {
  xgboost_thread_->Run([this] {
    if (booster_) XGBoosterFree(AsBooster(booster_));
    if (base_) XGBoosterFree(AsBooster(base_));
  });
}

std::vector<double> XGBoostCostModel::RandomScores(size_t n) {
  std::vector<double> out(n);
  for (double& x : out) x = rng_.UniformReal();
  return out;
}

std::vector<double> XGBoostCostModel::Predict(const tir::Workload& workload,
                                              const std::vector<const tir::Schedule*>& candidates) {
  return PredictSummarized(workload, candidates, {});
}

std::vector<float> XGBoostCostModel::Summarize(const tir::PrimFunc& lowered) const { return ExtractFeatures(lowered); }

std::vector<double> XGBoostCostModel::PredictSummarized(const tir::Workload& workload,
                                                        const std::vector<const tir::Schedule*>& candidates,
                                                        const std::vector<std::vector<float>>& summaries) {
  (void)workload;  // the features say everything the model uses
  if (!trained()) return RandomScores(candidates.size());
  // Features the search did not hand over are computed here; lowering is the cost, so it is spread
  // over the cores (each candidate is independent).
  const size_t width = FeatureNames().size();
  std::vector<std::vector<float>> all(candidates.size());
  std::vector<size_t> missing;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (i < summaries.size() && summaries[i].size() == width) {
      all[i] = summaries[i];
    } else {
      missing.push_back(i);
    }
  }
  ParallelFor(UsableCores(), missing.size(),
                   [&](size_t k) { all[missing[k]] = FeaturesOf(*candidates[missing[k]]); });
  std::vector<std::vector<float>> rows;
  std::vector<size_t> which;  // rows[k] is candidates[which[k]]
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (all[i].empty()) continue;
    rows.push_back(std::move(all[i]));
    which.push_back(i);
  }
  // A candidate that does not lower cannot be measured: it ranks last.
  std::vector<double> scores(candidates.size(), -std::numeric_limits<double>::infinity());
  const std::vector<double> predicted = PredictRows(rows);
  for (size_t k = 0; k < which.size() && k < predicted.size(); ++k) scores[which[k]] = predicted[k];
  return scores;
}

std::vector<double> XGBoostCostModel::PredictRows(const std::vector<std::vector<float>>& rows) {
  if (rows.empty()) return {};
  if (!trained()) return RandomScores(rows.size());
  auto scores = xgboost_thread_->Run([&] { return Scores(booster_, base_, rows); });
  // A failing prediction (never expected: the rows are well-formed) must not stop the search.
  if (!scores) return RandomScores(rows.size());
  return std::vector<double>(scores->begin(), scores->end());
}

void XGBoostCostModel::Update(const tir::Workload& workload, const std::vector<const tir::Schedule*>& candidates,
                              const std::vector<std::optional<double>>& latencies_ms) {
  const std::string key = workload.Key();
  const size_t n_in = std::min(candidates.size(), latencies_ms.size());
  // Failures are not slow candidates: only valid ones are featurized (in parallel: a resumed job
  // hands over every stored record of the workload at once).
  std::vector<std::vector<float>> features(n_in);
  ParallelFor(UsableCores(), n_in, [&](size_t i) {
    if (latencies_ms[i] && *latencies_ms[i] > 0) features[i] = FeaturesOf(*candidates[i]);
  });
  for (size_t i = 0; i < n_in; ++i) {
    if (features[i].empty()) continue;
    rows_.push_back(std::move(features[i]));
    latencies_.push_back(*latencies_ms[i]);
    groups_.push_back(key);
  }
  const size_t n = rows_.size();
  const size_t warm = static_cast<size_t>(std::max(1, config_.warmup_records));
  const size_t enough_new = std::max<size_t>(warm / 4, trained_on_ / 4);
  if (n >= warm && n >= trained_on_ + enough_new) (void)Retrain();
}

Result<void> XGBoostCostModel::Train(const std::vector<std::vector<float>>& rows,
                                     const std::vector<double>& latencies_ms, const std::vector<std::string>& groups) {
  if (rows.size() != latencies_ms.size() || rows.size() != groups.size()) {
    return MakeError("training data: rows, latencies and groups differ in number");
  }
  rows_ = rows;
  latencies_ = latencies_ms;
  groups_ = groups;
  return Retrain();
}

Result<void> XGBoostCostModel::Retrain() {
  return xgboost_thread_->Run([this] { return RetrainHere(); });
}

std::vector<float> BalancedWeights(const std::vector<float>& labels, const std::vector<unsigned>& group_sizes) {
  std::vector<float> w = labels;
  const double mean = static_cast<double>(labels.size()) / static_cast<double>(group_sizes.size());
  size_t at = 0;
  for (unsigned g : group_sizes) {
    for (unsigned k = 0; k < g; ++k, ++at) w[at] = static_cast<float>(w[at] * mean / g);
  }
  return w;
}

Result<void> XGBoostCostModel::RetrainHere() {
  if (rows_.empty()) return MakeError("no valid records to train on");
  // Rows of one group together: the pairwise objective takes groups as consecutive runs of rows.
  std::vector<size_t> order(rows_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups_[a] < groups_[b]; });
  const std::vector<float> all_labels = NormalizedThroughput(latencies_, groups_);
  std::vector<float> labels;
  std::vector<unsigned> group_sizes;
  for (size_t k = 0; k < order.size(); ++k) {
    labels.push_back(all_labels[order[k]]);
    if (k == 0 || groups_[order[k]] != groups_[order[k - 1]]) group_sizes.push_back(0);
    ++group_sizes.back();
  }

  Matrix m;
  AT_TRY_VOID(m.Fill(rows_, order));
  AT_TRY_VOID(m.SetFloats("label", labels));
  if (config_.objective == Objective::kWeightedRegression) {
    AT_TRY_VOID(m.SetFloats("weight", config_.balance_workloads ? BalancedWeights(labels, group_sizes) : labels));
  }
  if (config_.objective == Objective::kPairwise &&
      XGDMatrixSetUIntInfo(m.get(), "group", group_sizes.data(), group_sizes.size()) != 0) {
    return XgbError("groups");
  }
  if (base_) {
    AT_TRY(base_margin, Margins(base_, m, order.size()));
    AT_TRY_VOID(m.SetFloats("base_margin", base_margin));
  }

  BoosterHandle b = nullptr;
  DMatrixHandle dm = m.get();
  if (XGBoosterCreate(&dm, 1, &b) != 0) return XgbError("booster");
  auto fail = [&](const char* what) {
    Error e = XgbError(what);
    XGBoosterFree(b);
    return e;
  };
  std::vector<std::pair<std::string, std::string>> params = {
      {"objective", config_.objective == Objective::kPairwise ? "rank:pairwise" : "reg:squarederror"},
      {"tree_method", "hist"},
      {"max_depth", std::to_string(config_.max_depth)},
      {"eta", fmt::format("{}", config_.learning_rate)},
      {"seed", std::to_string(config_.seed)},
      {"verbosity", "0"},
  };
  if (config_.threads > 0) params.emplace_back("nthread", std::to_string(config_.threads));
  for (const auto& [k, v] : params) {
    if (XGBoosterSetParam(b, k.c_str(), v.c_str()) != 0) return fail("parameter");
  }
  for (int i = 0; i < config_.rounds; ++i) {
    if (XGBoosterUpdateOneIter(b, i, dm) != 0) return fail("training");
  }
  const std::pair<const char*, std::string> attrs[] = {{kAttrFeatures, kFeatureVersion},
                                                       {kAttrObjective, ObjectiveName(config_.objective)},
                                                       {kAttrTarget, config_.target},
                                                       {kAttrRecords, std::to_string(rows_.size())}};
  for (const auto& [k, v] : attrs) {
    if (XGBoosterSetAttr(b, k, v.c_str()) != 0) return fail("attribute");
  }
  if (booster_) XGBoosterFree(AsBooster(booster_));
  booster_ = b;
  trained_on_ = rows_.size();
  return {};
}

Result<std::string> XGBoostCostModel::Save() const {
  if (!booster_) return MakeError("the model is not trained");
  if (base_) return MakeError("a model trained on top of a loaded one cannot be saved on its own");
  return xgboost_thread_->Run([this]() -> Result<std::string> {
    bst_ulong len = 0;
    const char* data = nullptr;
    if (XGBoosterSaveModelToBuffer(AsBooster(booster_), R"({"format": "json"})", &len, &data) != 0) {
      return XgbError("save");
    }
    return std::string(data, len);
  });
}

Result<ModelInfo> XGBoostCostModel::Load(const std::string& bytes) {
  return xgboost_thread_->Run([&] { return LoadHere(bytes); });
}

Result<ModelInfo> XGBoostCostModel::LoadHere(const std::string& bytes) {
  BoosterHandle b = nullptr;
  if (XGBoosterCreate(nullptr, 0, &b) != 0) return XgbError("booster");
  if (XGBoosterLoadModelFromBuffer(b, bytes.data(), bytes.size()) != 0) {
    XGBoosterFree(b);
    return MakeError("not an XGBoost model");
  }
  ModelInfo info{Attr(b, kAttrFeatures), Attr(b, kAttrObjective), Attr(b, kAttrTarget), 0};
  const std::string records = Attr(b, kAttrRecords);
  if (!records.empty()) info.records = std::strtoll(records.c_str(), nullptr, 10);
  if (info.feature_version != kFeatureVersion) {
    XGBoosterFree(b);
    if (info.feature_version.empty()) return MakeError("not an autotune cost model (it names no feature version)");
    return MakeError(fmt::format("the model was trained on features {}, this autotune computes {}: retrain it with "
                                 "`autotune model train`",
                                 info.feature_version, kFeatureVersion));
  }
  if (config_.threads > 0) XGBoosterSetParam(b, "nthread", std::to_string(config_.threads).c_str());
  if (base_) XGBoosterFree(AsBooster(base_));
  base_ = b;
  if (booster_) XGBoosterFree(AsBooster(booster_));
  booster_ = nullptr;
  rows_.clear();
  latencies_.clear();
  groups_.clear();
  trained_on_ = 0;
  return info;
}

}  // namespace autotune::costmodel
