// Writing a command's output: a report, an answer or a kernel source. "-" means stdout.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

namespace autotune::cli {

// Throws UserError naming `what` and the path when the file cannot be written.
void WriteOutput(const std::string& path, const std::string& text, const char* what);

// The same `--json` on every command: `--json` alone or `--json -` prints JSON on stdout instead of
// text, `--json FILE` writes it to FILE. `file` stays empty when the option is not given.
CLI::Option* AddJsonOption(CLI::App& cmd, std::string& file, const std::string& what);

// Where a command's human-readable lines go: stderr while its JSON goes to stdout, so that stdout
// stays one JSON document for scripts.
std::FILE* TextStream(const std::string& json_file);

}  // namespace autotune::cli
