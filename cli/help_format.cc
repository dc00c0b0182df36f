#include "cli/help_format.h"

#include <sstream>

namespace autotune::cli {
namespace {

constexpr size_t kColumn = 34;  // where descriptions start
constexpr size_t kDescriptionWidth = kHelpWidth - kColumn;

// One line of text (no '\n') wrapped at `width`; a word longer than that stays whole.
void WrapLine(const std::string& line, size_t width, std::string& out) {
  std::istringstream words(line);
  std::string word;
  size_t used = 0;
  const size_t indent = line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' ');
  out += std::string(indent, ' ');
  used = indent;
  bool first = true;
  while (words >> word) {
    if (!first && used + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      used = indent;
      first = true;
    }
    if (!first) {
      out += ' ';
      ++used;
    }
    out += word;
    used += word.size();
    first = false;
  }
}

}  // namespace

std::string WrapText(const std::string& text, size_t width) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    WrapLine(line, width, out);
    if (end == std::string::npos) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

HelpFormatter::HelpFormatter() { column_width(kColumn); }

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  return WrapText(CLI::Formatter::make_option_desc(opt), kDescriptionWidth);
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
  std::stringstream out;
  CLI::detail::format_help(out, sub->get_display_name(true), WrapText(sub->get_description(), kDescriptionWidth),
                           get_column_width());
  return out.str();
}

std::string HelpFormatter::make_description(const CLI::App* app) const {
  return WrapText(CLI::Formatter::make_description(app), kHelpWidth);
}

}  // namespace autotune::cli
