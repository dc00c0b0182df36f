// The shared secret of workers and the jobs that use them, read from a file (never from the command
// line, where `ps` would show it).
#pragma once

#include <string>

namespace autotune::cli {

// The token: the file's one line, surrounding blanks and the trailing newline dropped. UserError when
// the file cannot be read, is empty or holds more than one line.
std::string ReadTokenFile(const std::string& path);

}  // namespace autotune::cli
