// Parse-free checks of generated markup, shared by the report tests: every opened element is closed
// in order, and counting what a chart drew.
#pragma once

#include <regex>
#include <string>
#include <vector>

namespace autotune::cli::report::testing {

// "" when the tags of `markup` nest properly (void HTML elements and <!...> excepted), else what is
// wrong. Attribute values must not hold '<' or '>' (the escaping guarantees that).
inline std::string TagBalanceError(const std::string& markup) {
  static const std::vector<std::string> kVoid = {"meta", "br", "hr", "img", "input", "link"};
  std::vector<std::string> open;
  for (size_t at = markup.find('<'); at != std::string::npos; at = markup.find('<', at + 1)) {
    const size_t end = markup.find('>', at);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(at);
    const std::string tag = markup.substr(at + 1, end - at - 1);
    if (tag.empty()) return "empty tag at " + std::to_string(at);
    if (tag[0] == '!' || tag[0] == '?') continue;
    if (tag.find('<') != std::string::npos) return "'<' inside a tag at " + std::to_string(at);
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) {
        return "</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">");
      }
      open.pop_back();
      continue;
    }
    if (tag.back() == '/') continue;  // <line .../>
    const std::string name = tag.substr(0, tag.find_first_of(" \n\t"));
    bool is_void = false;
    for (const auto& v : kVoid) is_void |= v == name;
    if (!is_void) open.push_back(name);
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  return "";
}

inline int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The vertices of the first <polyline>'s points attribute (0 when there is none).
inline int PolylineVertices(const std::string& svg) {
  std::smatch m;
  if (!std::regex_search(svg, m, std::regex("<polyline[^>]* points=\"([^\"]*)\""))) return 0;
  const std::string pts = m[1];
  return pts.empty() ? 0 : Count(pts, ",");
}

}  // namespace autotune::cli::report::testing
