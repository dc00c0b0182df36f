// `db import`'s reader: JSON lines of records, each checked (fields, workload key, trace hash, the
// numbers, the trace's replay). Property: every accepted record writes back to a line that reads as
// the same record.
#include <sstream>

#include "db/jsonl.h"
#include "db/record_json.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace autotune;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  auto records = db::ReadJsonl(in);
  if (!records) return 0;
  for (const db::TuningRecord& r : *records) {
    auto line = db::RecordToJsonLine(r);
    FUZZ_CHECK(line);
    auto back = db::RecordFromJsonLine(*line);
    FUZZ_CHECK(back);
    FUZZ_CHECK(*back == r);
  }
  return 0;
}
