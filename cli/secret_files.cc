#include "cli/token_file.h"

#include <fmt/format.h>

#include <fstream>
#include <iterator>

#include "cli/cli_error.h"

namespace autotune::cli {

std::string ReadTokenFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UserError{fmt::format("cannot read the token file '{}'", path)};
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // A trailing newline (echo > file) is not part of the token.
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) throw UserError{fmt::format("the token file '{}' is empty", path)};
  const size_t end = text.find_last_not_of(" \t\r\n");
  std::string token = text.substr(begin, end - begin + 1);
  if (token.find_first_of("\r\n") != std::string::npos) {
    throw UserError{fmt::format("the token file '{}' holds more than one line", path)};
  }
  return token;
}

}  // namespace autotune::cli
