// Opening the tuning database a command names: any failure (missing file when reading, corrupt
// file, newer schema) is a UserError with the database's own one-line message.
#pragma once

#include <memory>
#include <string>

#include "db/database.h"

namespace autotune::cli {

std::unique_ptr<db::TuningDatabase> OpenDatabase(const std::string& path, db::OpenMode mode);

}  // namespace autotune::cli
