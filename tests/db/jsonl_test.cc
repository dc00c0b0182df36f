// Export and import: the line format, a lossless round trip, and lines that must be refused (bad
// JSON, missing or mistyped fields, a trace or key that does not match its hash).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "db/database.h"
#include "db/jsonl.h"
#include "db/record_json.h"
#include "tests/db/db_test_util.h"

namespace autotune::db {
namespace {

using namespace autotune::db::testing;
using nlohmann::json;

// Two workloads (one with an epilogue), three targets, a failed record, varied details.
std::vector<TuningRecord> Mixed() {
  const auto a = Gemm(), b = Gemm("M=128,N=32,K=64", "bias,relu");
  auto records = DistinctRecords(a, CpuTarget(), 3);
  auto more = DistinctRecords(b, CudaTarget(), 2, 50);
  records.insert(records.end(), more.begin(), more.end());
  records.push_back(MakeFailedRecord(a, 900, CudaTarget("sm_80")));
  records[1].max_rel_error.reset();
  SetMedian(records[2], 0.1 + 0.2);  // a double that needs all 17 digits
  records[2].info_json = R"({"nested":{"list":[1,2.5,"x"]},"spill_bytes":0})";
  records[3].error_message = "";
  return records;
}

std::string Export(TuningDatabase& db) {
  std::ostringstream out;
  auto n = ExportJsonl(db, out);
  EXPECT_TRUE(n) << (n ? "" : n.error().message);
  return out.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

Result<ImportCounts> Import(TuningDatabase& db, const std::string& text) {
  std::istringstream in(text);
  return ImportJsonl(db, in, /*batch_size=*/2);
}

TEST(DbJsonl, LineFormatKeepsTheDocumentedKeyOrderAndTheCanonicalShapeOrder) {
  const TuningRecord r = Mixed()[3];
  auto line = RecordToJsonLine(r);
  ASSERT_TRUE(line) << line.error().message;
  EXPECT_EQ(line->find('\n'), std::string::npos);
  EXPECT_EQ(line->rfind("{\"workload\":{\"key\":\"", 0), 0u) << *line;
  EXPECT_NE(line->find("\"shape\":{\"M\":128,\"N\":32,\"K\":64},\"epilogue\":\"bias,relu\""), std::string::npos)
      << *line;
  const json j = json::parse(*line);
  for (const char* key :
       {"workload", "target", "trace", "trace_hash", "trace_format_version", "latencies_ms", "median_ms", "gflops",
        "correct", "max_rel_error", "error_kind", "error", "measured_at", "autotune_version", "info"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_TRUE(j["trace"].is_object());
  EXPECT_EQ(j["trace"].dump(), r.trace_json);
  auto back = RecordFromJsonLine(*line);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, r);
}

TEST(DbJsonl, ExportImportExportIsByteIdenticalAndImportingAgainAddsNothing) {
  auto a = OpenNew("export-a.db");
  const auto records = Mixed();
  ASSERT_TRUE(a->CommitBatch(records));
  const std::string first = Export(*a);
  EXPECT_EQ(Lines(first).size(), records.size());

  auto b = OpenNew("export-b.db");
  auto counts = Import(*b, first);
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->read, 6);
  EXPECT_EQ(counts->inserted, 6);
  EXPECT_EQ(counts->duplicates, 0);
  EXPECT_EQ(Export(*b), first);
  EXPECT_EQ(AllRecords(*b), records);

  counts = Import(*b, first + "\n  \n");  // blank lines are skipped
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->read, 6);
  EXPECT_EQ(counts->inserted, 0);
  EXPECT_EQ(counts->duplicates, 6);
}

// One shape in two element types is two workloads: an import of both (the suite's float32 records
// and its float16 ones in one file) keys each by its own type.
TEST(DbJsonl, OneShapeInTwoTypesImportsAsTwoWorkloads) {
  auto w16 = tir::MakeWorkload("gemm", "M=64,N=64,K=64", "", "float16");
  ASSERT_TRUE(w16) << w16.error().message;
  auto records = DistinctRecords(Gemm(), CudaTarget(), 2);
  auto half = DistinctRecords(*w16, CudaTarget(), 2, 50);
  records.insert(records.end(), half.begin(), half.end());
  auto a = OpenNew("two-types-a.db");
  ASSERT_TRUE(a->CommitBatch(records));
  auto b = OpenNew("two-types-b.db");
  auto counts = Import(*b, Export(*a));
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_EQ(counts->inserted, 4);
  EXPECT_EQ(AllRecords(*b), records);
}

TEST(DbJsonl, ABadLineIsAnErrorNamingItAndNothingIsImported) {
  auto a = OpenNew("bad-a.db");
  ASSERT_TRUE(a->CommitBatch(Mixed()));
  const auto lines = Lines(Export(*a));
  struct Case {
    std::string what;
    std::function<void(json&)> edit;  // null: line 4 is replaced by text that is not JSON
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"not json", nullptr, "not valid JSON"},
      {"missing median", [](json& j) { j.erase("median_ms"); }, "median_ms: is missing"},
      {"latency text", [](json& j) { j["latencies_ms"][0] = "fast"; }, "latencies_ms"},
      {"correct as 1", [](json& j) { j["correct"] = 1; }, "correct: must be true or false"},
      {"target missing", [](json& j) { j.erase("target"); }, "target: is missing"},
      {"arch number", [](json& j) { j["target"]["arch"] = 90; }, "target.arch: must be a string"},
      {"unknown op", [](json& j) { j["workload"]["op"] = "fft"; }, "workload:"},
      {"shape text", [](json& j) { j["workload"]["shape"]["M"] = "64"; }, "workload.shape.M: must be an integer"},
      {"key edited", [](json& j) { j["workload"]["key"] = std::string(64, 'a'); }, "workload.key:"},
      {"shape edited", [](json& j) { j["workload"]["shape"]["M"] = 96; }, "workload.key:"},
      {"layout edited", [](json& j) { j["workload"]["layout"] = "A[K,M] B[K,N] -> C[M,N]"; }, "workload.layout"},
      {"hash edited", [](json& j) { j["trace_hash"] = std::string(64, '0'); }, "trace_hash:"},
      {"trace edited",
       [](json& j) {
         auto& insts = j["trace"]["instructions"];
         insts.erase(insts.size() - 1);
       },
       "trace_hash:"},
      {"trace not a trace",
       [](json& j) {
         j["trace"] = json::object({{"steps", 1}});
       },
       "trace:"},
      {"info list", [](json& j) { j["info"] = json::array(); }, "info: must be an object"},
  };
  for (const Case& c : cases) {
    auto edited = lines;
    if (c.edit) {
      json j = json::parse(edited[3]);
      c.edit(j);
      edited[3] = j.dump();
    } else {
      edited[3] = "{\"workload\": ";
    }
    auto db = OpenNew("bad-b.db");
    auto counts = Import(*db, Join(edited));
    ASSERT_FALSE(counts) << c.what;
    EXPECT_EQ(counts.error().message.rfind("line 4: ", 0), 0u) << c.what << ": " << counts.error().message;
    EXPECT_NE(counts.error().message.find(c.expected), std::string::npos) << c.what << ": " << counts.error().message;
    EXPECT_TRUE(AllRecords(*db).empty()) << c.what;
  }
}

}  // namespace
}  // namespace autotune::db
