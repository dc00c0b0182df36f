#include "cli/help_format.h"

#include <optional>
#include <regex>
#include <set>
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

// CLI11 names a validated option's type "INT:INT in [1 - 4096]": the type, then the validator.
std::string BareTypeName(const std::string& type) { return type.substr(0, type.find(':')); }

// Whether `value` is a number outside the range named in the type (CLI11's "in [a - b]"): such a
// default is the code's "not given" placeholder, not a value a user could pass.
bool OutsideRange(const std::string& type, const std::string& value) {
  static const std::regex range(R"(in \[(-?[0-9.e+]+) - (-?[0-9.e+]+)\])");
  std::smatch m;
  if (!std::regex_search(type, m, range)) return false;
  try {
    size_t used = 0;
    const double v = std::stod(value, &used);
    return used == value.size() && (v < std::stod(m[1]) || v > std::stod(m[2]));
  } catch (const std::exception&) {
    return false;
  }
}

std::string OptionNames(const std::set<CLI::Option*>& options) {
  std::string out;
  for (const CLI::Option* o : options) out += (out.empty() ? "" : ", ") + o->get_name();
  return out;
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

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
  if (opt->get_type_size() == 0) return "";
  std::string out = " " + BareTypeName(opt->get_type_name());
  const std::string& value = opt->get_default_str();
  if (!value.empty() && value != "[]" && !OutsideRange(opt->get_type_name(), value)) out += "=" + value;
  if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
  if (opt->get_required()) out += " REQUIRED";
  return out;
}

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  std::string text = opt->get_description();
  if (const auto excludes = opt->get_excludes(); !excludes.empty()) text += " (not with " + OptionNames(excludes) + ")";
  if (const auto needs = opt->get_needs(); !needs.empty()) text += " (needs " + OptionNames(needs) + ")";
  return WrapText(text, kDescriptionWidth);
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
