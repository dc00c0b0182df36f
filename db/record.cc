#include "db/record.h"

#include <fmt/format.h>

#include <ctime>

#include "support/sha256.h"

namespace autotune::db {

WorkloadInfo WorkloadInfo::From(const tir::Workload& w) {
  WorkloadInfo info;
  info.key = w.Key();
  info.op = w.op;
  info.shape = w.shape;
  info.epilogue = w.epilogue;
  info.dtype = w.TypeName();
  info.layout = w.layout;
  info.flops = w.flops;
  return info;
}

std::string WorkloadInfo::ShapeText() const { return tir::ShapeText(shape); }

std::string WorkloadInfo::CanonicalText() const { return tir::CanonicalWorkloadText(op, shape, epilogue, dtype); }

std::string HashTraceJson(const std::string& trace_json) { return Sha256Hex(trace_json); }

std::string NowIso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::optional<int64_t> ParseIso8601(const std::string& text) {
  // Exactly "YYYY-MM-DDTHH:MM:SSZ": digits where digits belong, nothing before or after.
  static constexpr char kForm[] = "dddd-dd-ddTdd:dd:ddZ";
  if (text.size() != sizeof kForm - 1) return std::nullopt;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool digit = text[i] >= '0' && text[i] <= '9';
    if (kForm[i] == 'd' ? !digit : text[i] != kForm[i]) return std::nullopt;
  }
  auto num = [&](size_t at, size_t len) { return std::stoi(text.substr(at, len)); };
  std::tm utc{};
  utc.tm_year = num(0, 4) - 1900;
  utc.tm_mon = num(5, 2) - 1;
  utc.tm_mday = num(8, 2);
  utc.tm_hour = num(11, 2);
  utc.tm_min = num(14, 2);
  utc.tm_sec = num(17, 2);
  if (utc.tm_mon < 0 || utc.tm_mon > 11 || utc.tm_mday < 1 || utc.tm_mday > 31 || utc.tm_hour > 23 ||
      utc.tm_min > 59 || utc.tm_sec > 59) {
    return std::nullopt;
  }
  // timegm normalizes days past the month's end (Feb 30 -> Mar 2): that is a malformed time.
  const int mday = utc.tm_mday;
  const std::time_t t = timegm(&utc);
  if (utc.tm_mday != mday) return std::nullopt;
  return static_cast<int64_t>(t);
}

}  // namespace autotune::db
