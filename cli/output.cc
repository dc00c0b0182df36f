#include "cli/output.h"

#include <fmt/format.h>

#include <fstream>

#include "cli/cli_error.h"

namespace autotune::cli {

void WriteOutput(const std::string& path, const std::string& text, const char* what) {
  if (path == "-") {
    fmt::print("{}", text);
    return;
  }
  std::ofstream out(path);
  if (!(out << text)) throw UserError{fmt::format("cannot write {} to '{}'", what, path)};
}

}  // namespace autotune::cli
