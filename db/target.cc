#include "db/target.h"

#include <fmt/format.h>

namespace autotune::db {

std::string TargetInfo::Text() const {
  std::string details = device;
  if (!driver.empty()) details += (details.empty() ? "" : "; ") + std::string("driver ") + driver;
  if (!toolkit.empty()) details += (details.empty() ? "" : "; ") + std::string("toolkit ") + toolkit;
  return details.empty() ? ShortText() : fmt::format("{} ({})", ShortText(), details);
}

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
  return q;
}

}  // namespace autotune::db
