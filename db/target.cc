#include "db/target.h"

#include <fmt/format.h>

#include <cctype>

namespace autotune::db {

std::string TargetInfo::Text() const {
  std::string details = device;
  if (!driver.empty()) details += (details.empty() ? "" : "; ") + std::string("driver ") + driver;
  if (!toolkit.empty()) details += (details.empty() ? "" : "; ") + std::string("toolkit ") + toolkit;
  return details.empty() ? ShortText() : fmt::format("{} ({})", ShortText(), details);
}

namespace {

// "sm_" then digits, then an optional feature suffix of lowercase letters ("sm_90", "sm_90a", "sm_100f").
bool IsCudaArch(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) return false;
  size_t i = 3;
  while (i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i]))) ++i;
  if (i == 3) return false;
  while (i < arch.size() && std::islower(static_cast<unsigned char>(arch[i]))) ++i;
  return i == arch.size();
}

}  // namespace

Result<TargetQuery> ParseTargetQuery(const std::string& text) {
  TargetQuery q;
  const auto colon = text.find(':');
  q.kind = text.substr(0, colon);
  if (colon != std::string::npos) q.arch = text.substr(colon + 1);
  const bool arch_ok = colon == std::string::npos ||
                       (!q.arch.empty() && q.arch.find_first_of(": \t") == std::string::npos);
  if ((q.kind != "cpu" && q.kind != "cuda") || !arch_ok) {
    return MakeError(fmt::format("unknown target '{}' (expected cpu, cuda, or kind:arch such as cuda:sm_90)", text));
  }
  // A misspelt GPU architecture would match no record and read as "not found" instead of bad input.
  if (q.kind == "cuda" && !q.arch.empty() && !IsCudaArch(q.arch)) {
    return MakeError(fmt::format("unknown cuda architecture '{}' in target '{}' (expected sm_ and a number, such as cuda:sm_90)", q.arch, text));
  }
  return q;
}

}  // namespace autotune::db
