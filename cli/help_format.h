// --help text that fits a terminal: descriptions word-wrapped at 100 columns, continuation lines
// aligned under the first, for options, commands and the command's own description. An option shows
// its value's type and a default that is a real value (not CLI11's validator text, an empty list or
// an out-of-range "unset" placeholder); what it excludes or needs goes into its description.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>

namespace autotune::cli {

inline constexpr size_t kHelpWidth = 100;

// `text` word-wrapped at `width` columns; its own line breaks are kept.
std::string WrapText(const std::string& text, size_t width);

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter();
  std::string make_option_opts(const CLI::Option* opt) const override;
  std::string make_option_desc(const CLI::Option* opt) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;
};

}  // namespace autotune::cli
