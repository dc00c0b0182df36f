#include "db/record.h"

#include <fmt/format.h>

#include <ctime>

#include "tir/support/sha256.h"

namespace autotune::db {

WorkloadInfo WorkloadInfo::From(const tir::Workload& w) {
  WorkloadInfo info;
  info.key = w.Key();
  info.op = w.op;
  info.shape = w.shape;
  info.epilogue = w.epilogue;
  info.dtype = tir::DTypeName(w.output.dtype);
  info.layout = w.layout;
  info.flops = w.flops;
  return info;
}

std::string WorkloadInfo::ShapeText() const { return tir::ShapeText(shape); }

std::string WorkloadInfo::CanonicalText() const {
  return op + "[" + ShapeText() + "]" + (epilogue.empty() ? "" : "+" + epilogue);
}

std::string HashTraceJson(const std::string& trace_json) { return Sha256Hex(trace_json); }

std::string NowIso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

}  // namespace autotune::db
