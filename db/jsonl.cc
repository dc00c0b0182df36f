#include "db/jsonl.h"

#include <fmt/format.h>

#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "db/record_check.h"
#include "db/record_json.h"

namespace autotune::db {

Result<int64_t> ExportJsonl(TuningDatabase& db, std::ostream& out) {
  int64_t written = 0;
  std::optional<Error> failed;
  auto r = db.ForEachRecord([&](const TuningRecord& record) {
    auto line = RecordToJsonLine(record);
    if (!line) {
      failed =
          MakeError(fmt::format("{}: record {} cannot be exported: {}", db.path(), written + 1, line.error().message));
      return false;
    }
    out << *line << '\n';
    if (!out) {
      failed = MakeError("write error");
      return false;
    }
    ++written;
    return true;
  });
  if (!r) return r.error();
  if (failed) return *failed;
  out.flush();
  if (!out) return MakeError("write error");
  return written;
}

Result<std::vector<TuningRecord>> ReadJsonl(std::istream& in) {
  std::vector<TuningRecord> records;
  std::vector<int64_t> line_of;  // each record's line number, for messages
  WorkloadCache cache;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto r = RecordFromJsonLine(line, &cache);
    if (!r) return MakeError(fmt::format("line {}: {}", number, r.error().message));
    records.push_back(std::move(*r));
    line_of.push_back(number);
  }
  if (in.bad()) return MakeError("read error");
  if (auto failed = RecordChecker().FirstFailure(records)) {
    return MakeError(fmt::format("line {}: {}", line_of[failed->first], failed->second.message));
  }
  return records;
}

Result<ImportCounts> StoreRecords(TuningDatabase& db, std::vector<TuningRecord> records, int batch_size) {
  ImportCounts counts;
  counts.read = static_cast<int64_t>(records.size());
  const size_t step = batch_size > 0 ? static_cast<size_t>(batch_size) : records.size();
  for (size_t begin = 0; begin < records.size(); begin += step) {
    const size_t end = std::min(records.size(), begin + step);
    auto n = db.CommitBatch(std::vector<TuningRecord>(std::make_move_iterator(records.begin() + begin),
                                                      std::make_move_iterator(records.begin() + end)));
    // Batches already committed stay: importing again after the problem is fixed skips them.
    if (!n) return MakeError(fmt::format("after {} of {} records: {}", begin, records.size(), n.error().message));
    counts.inserted += *n;
  }
  counts.duplicates = counts.read - counts.inserted;
  return counts;
}

Result<ImportCounts> ImportJsonl(TuningDatabase& db, std::istream& in, int batch_size) {
  auto records = ReadJsonl(in);
  if (!records) return records.error();
  return StoreRecords(db, std::move(*records), batch_size);
}

}  // namespace autotune::db
