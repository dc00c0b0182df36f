#include "cli/output.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>

#include "cli/cli_error.h"

namespace autotune::cli {

void WriteOutput(const std::string& path, const std::string& text, const char* what) {
  if (path == "-") {
    fmt::print("{}", text);
    std::fflush(stdout);
    return;
  }
  std::ofstream out(path);
  if (!(out << text)) throw UserError{fmt::format("cannot write {} to '{}'", what, path)};
}

namespace {

// Why `path` could not take a command's JSON, or "" when it can. It never replaces a file that is
// not JSON: `db merge --json a.db b.db` must not overwrite the database a.db.
std::string OutputPathProblem(const std::string& path) {
  if (path.empty() || path == "-") return "";
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) return "it is a directory";
  if (fs::exists(st) && !fs::is_regular_file(st)) return "it is not a regular file";
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) return fmt::format("no directory '{}'", dir.string());
  if (::access(dir.c_str(), W_OK) != 0) return "its directory is not writable";
  if (fs::is_regular_file(st) && fs::file_size(path, ec) > 0) {
    std::ifstream in(path, std::ios::binary);
    char c = ' ';
    while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
    }
    if (in && c != '{' && c != '[') return "it exists and is not a JSON file (not overwriting it)";
  }
  return "";
}

}  // namespace

CLI::Option* AddJsonOption(CLI::App& cmd, std::string& file, const std::string& what) {
  return cmd.add_option("--json", file, fmt::format("{} as JSON: on stdout (--json or --json -) or to FILE", what))
      ->type_name("[FILE]")
      ->expected(0, 1)
      ->default_str("-")
      ->check(CLI::Validator(
          [](std::string& path) {
            const std::string problem = OutputPathProblem(path);
            return problem.empty() ? problem : fmt::format("cannot write JSON to '{}': {}", path, problem);
          },
          ""));
}

std::FILE* TextStream(const std::string& json_file) { return json_file == "-" ? stderr : stdout; }

}  // namespace autotune::cli
