#include "cli/open_database.h"

#include "cli/cli_error.h"

namespace autotune::cli {

std::unique_ptr<db::TuningDatabase> OpenDatabase(const std::string& path, db::OpenMode mode) {
  auto opened = db::TuningDatabase::Open(path, mode);
  if (!opened) throw UserError{opened.error().message};
  return std::move(opened).value();
}

}  // namespace autotune::cli
