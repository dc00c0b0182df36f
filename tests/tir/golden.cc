// Golden-file comparison for the tir tests: reading, rewriting on request, and a line diff for the
// failure message.
#include "tests/tir/golden.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#ifndef AUTOTUNE_GOLDEN_DIR
#error "AUTOTUNE_GOLDEN_DIR (the absolute path of tests/tir/golden) must be defined by the build"
#endif

namespace autotune::tir::testing {
namespace {

std::string GoldenPath(const std::string& name) { return std::string(AUTOTUNE_GOLDEN_DIR) + "/" + name; }

bool UpdateRequested() {
  const char* v = std::getenv("AUTOTUNE_UPDATE_GOLDEN");
  return v != nullptr && std::string_view(v) == "1";
}

// Byte for byte (binary mode: no newline translation), or nothing when the file cannot be opened.
std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out.flush());
}

// Lines without their '\n'. A missing final newline is marked on the last line, so a difference in
// it alone still shows in the diff.
std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  if (!text.empty() && text.back() != '\n') lines.back() += "  <no newline at end>";
  return lines;
}

// One line of a diff: ' ' in both texts, '-' golden only, '+' actual only.
struct DiffLine {
  char op;
  const std::string* text;
};

// The shortest edit script from a longest common subsequence; golden texts are tens of lines, so the
// quadratic table is cheap. Of a changed line, the golden one comes first, as in a unified diff.
std::vector<DiffLine> EditScript(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> lcs(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  std::vector<DiffLine> script;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      script.push_back({' ', &a[i++]});
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      script.push_back({'-', &a[i++]});
    } else {
      script.push_back({'+', &b[j++]});
    }
  }
  return script;
}

// The changed lines with 3 lines of context around each; "..." stands for the unchanged lines left out.
std::string LineDiff(const std::string& golden, const std::string& actual) {
  const std::vector<std::string> a = SplitLines(golden), b = SplitLines(actual);
  const std::vector<DiffLine> script = EditScript(a, b);
  constexpr size_t kContext = 3;
  std::vector<bool> shown(script.size(), false);
  for (size_t k = 0; k < script.size(); ++k) {
    if (script[k].op == ' ') continue;
    for (size_t c = k - std::min(k, kContext); c < std::min(script.size(), k + kContext + 1); ++c) shown[c] = true;
  }
  std::string out = "--- golden\n+++ actual\n";
  for (size_t k = 0; k < script.size(); ++k) {
    if (shown[k]) out += script[k].op + *script[k].text + "\n";
    else if (k == 0 || shown[k - 1]) out += "...\n";
  }
  return out;
}

void Rewrite(const std::string& path, const std::string& actual, const std::optional<std::string>& old,
             const char* file, int line) {
  if (!WriteFile(path, actual)) {
    ADD_FAILURE_AT(file, line) << "could not write golden file " << path;
    return;
  }
  ADD_FAILURE_AT(file, line) << (old ? "rewrote" : "created") << " golden file " << path
                             << " (AUTOTUNE_UPDATE_GOLDEN=1); review it with git diff, then rerun without the variable"
                             << (old ? "\n" + LineDiff(*old, actual) : "");
}

}  // namespace

void ExpectGolden(const std::string& actual, const std::string& name, const char* file, int line) {
  const std::string path = GoldenPath(name);
  const std::optional<std::string> golden = ReadFile(path);
  if (golden == actual) return;
  if (UpdateRequested()) {
    Rewrite(path, actual, golden, file, line);
    return;
  }
  if (!golden) {
    ADD_FAILURE_AT(file, line) << "golden file " << path << " is missing; to create it from the actual text below, "
                               << "run the test with AUTOTUNE_UPDATE_GOLDEN=1, then review and commit the file.\n"
                               << actual;
    return;
  }
  ADD_FAILURE_AT(file, line) << "IR text differs from golden file " << path
                             << " (to accept the actual text, rerun with AUTOTUNE_UPDATE_GOLDEN=1)\n"
                             << LineDiff(*golden, actual);
}

}  // namespace autotune::tir::testing
