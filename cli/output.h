// Writing a command's output file: a report, an answer or a kernel source. "-" means stdout.
#pragma once

#include <string>

namespace autotune::cli {

// Throws UserError naming `what` and the path when the file cannot be written.
void WriteOutput(const std::string& path, const std::string& text, const char* what);

}  // namespace autotune::cli
