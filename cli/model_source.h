// Where `--model MODEL` finds a trained cost model: a file written by `autotune model train --out`,
// or else a model stored in the tuning database under that name (`model train --save-as`).
#pragma once

#include <memory>
#include <string>

#include "costmodel/xgboost_model.h"
#include "db/database.h"

namespace autotune::cli {

// Loads MODEL into `model` (as its base) and returns what the model says about itself; UserError when
// it is neither a readable model file nor a name stored in `database`, or when it was trained on
// records of another target kind than `target_kind` ("cpu", "cuda").
costmodel::ModelInfo LoadModel(const std::string& model_arg, db::TuningDatabase& database,
                               costmodel::XGBoostCostModel& model, const std::string& target_kind);

}  // namespace autotune::cli
