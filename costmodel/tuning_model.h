// The XGBoost model a tuning job ranks its candidates with, and the start model it learns on top of.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "costmodel/xgboost_model.h"
#include "support/result.h"

namespace autotune::costmodel {

// XGBoost as a tuning job trains it, for records of `target` ("cuda:sm_90", "cpu:x86_64").
std::unique_ptr<XGBoostCostModel> MakeTuningXGBoost(const std::string& target, uint64_t seed);

// Starts `model` from the model built into autotune for `target`: what it says about itself, nullopt
// when there is none for that target, or an error when it does not load (its features changed
// without a retrain), which a job reports and survives by starting cold.
Result<std::optional<ModelInfo>> StartFromBuiltinModel(XGBoostCostModel& model, const std::string& target);

}  // namespace autotune::costmodel
