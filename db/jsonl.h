// `autotune db export` / `import`: the records of a database as JSON lines, one record a line in the
// format of db/record_json.h. An export imported into a fresh database exports to the same bytes.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <vector>

#include "db/database.h"
#include "support/result.h"

namespace autotune::db {

// Writes every record in insertion order; returns how many.
Result<int64_t> ExportJsonl(TuningDatabase& db, std::ostream& out);

struct ImportCounts {
  int64_t read = 0;        // records in the input
  int64_t inserted = 0;    // new to the database
  int64_t duplicates = 0;  // already stored (same workload, target and trace), skipped
};

// Parses and checks every line (db/record_json.h, then db/record_check.h: believable numbers, a
// trace that replays); a bad line is an error naming its number and why. Empty lines are skipped.
Result<std::vector<TuningRecord>> ReadJsonl(std::istream& in);
// Stores records in batches of `batch_size` (one transaction each), skipping those already stored.
Result<ImportCounts> StoreRecords(TuningDatabase& db, std::vector<TuningRecord> records, int batch_size = 1000);
// ReadJsonl, then StoreRecords: a bad line means nothing is imported. Importing the same file
// again inserts nothing.
Result<ImportCounts> ImportJsonl(TuningDatabase& db, std::istream& in, int batch_size = 1000);

}  // namespace autotune::db
