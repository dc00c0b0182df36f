#include "costmodel/tuning_model.h"

#include "costmodel/pretrained_models.h"

namespace autotune::costmodel {

std::unique_ptr<XGBoostCostModel> MakeTuningXGBoost(const std::string& target, uint64_t seed) {
  XGBoostConfig config;
  config.seed = seed;
  config.target = target;
  // One thread: XGBoost's OpenMP threads meet at a barrier at every step of a tree, so next to the
  // compilers and the search each retrain waits for the slowest to get a core (seconds instead of
  // under one). On the cpu target more threads would also share the cores with the timed kernels.
  config.threads = 1;
  return std::make_unique<XGBoostCostModel>(config);
}

Result<std::optional<ModelInfo>> StartFromBuiltinModel(XGBoostCostModel& model, const std::string& target) {
  const std::optional<PretrainedModel> builtin = FindPretrainedModel(target);
  if (!builtin) return std::optional<ModelInfo>();
  auto info = model.Load(std::string(builtin->bytes));
  if (!info) return info.error();
  return std::optional<ModelInfo>(*info);
}

}  // namespace autotune::costmodel
