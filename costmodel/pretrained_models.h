// Cost models trained on earlier tuning records, built into autotune so that a job on a GPU they
// know steers from its first round (costmodel/pretrained/README.md says what each was trained on).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace autotune::costmodel {

struct PretrainedModel {
  std::string_view target;  // what its records were measured on, as TargetInfo::ShortText: "cuda:sm_90"
  std::string_view bytes;   // XGBoost JSON, for XGBoostCostModel::Load
};

// Every built-in model.
const std::vector<PretrainedModel>& PretrainedModels();

// The built-in model of `target` ("cuda:sm_90"), if there is one.
std::optional<PretrainedModel> FindPretrainedModel(std::string_view target);

}  // namespace autotune::costmodel
