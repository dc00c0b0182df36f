#include "cli/model_source.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli_error.h"

namespace autotune::cli {

costmodel::ModelInfo LoadModel(const std::string& model_arg, db::TuningDatabase& database,
                               costmodel::XGBoostCostModel& model, const std::string& target_kind) {
  std::string bytes, where;
  std::error_code ec;
  if (std::filesystem::is_regular_file(model_arg, ec)) {
    std::ifstream in(model_arg, std::ios::binary);
    std::ostringstream text;
    if (!(text << in.rdbuf())) throw UserError{fmt::format("cannot read the model file '{}'", model_arg)};
    bytes = text.str();
    where = fmt::format("model file '{}'", model_arg);
  } else {
    auto stored = database.LoadCostModel(model_arg);
    if (!stored) throw UserError{stored.error().message};
    if (!stored->has_value()) {
      throw UserError{fmt::format("no model file '{}' and no model of that name in '{}' (make one with `autotune "
                                  "model train`)",
                                  model_arg, database.path())};
    }
    bytes.assign((*stored)->blob.begin(), (*stored)->blob.end());
    where = fmt::format("model '{}' of '{}'", model_arg, database.path());
  }
  auto info = model.Load(bytes);
  if (!info) throw UserError{fmt::format("{}: {}", where, info.error().message)};
  if (!info->target.empty() && info->target.substr(0, info->target.find(':')) != target_kind) {
    throw UserError{fmt::format("{} was trained on {} records, not {}", where, info->target, target_kind)};
  }
  return *info;
}

}  // namespace autotune::cli
