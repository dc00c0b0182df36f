// `autotune db merge`: folds the records of another tuning database into this one (tuning results
// gathered on several machines). The other file is opened read-only, so an older schema is fine and
// it is never written.
#pragma once

#include <cstdint>
#include <string>

#include "db/database.h"
#include "support/result.h"

namespace autotune::db {

struct MergeCounts {
  int64_t read = 0;        // records in the other database
  int64_t added = 0;       // new to `into`
  int64_t duplicates = 0;  // already in `into` (same workload, target and trace hash), skipped
  int64_t refused = 0;     // failed db/record_check.h's checks, not stored
  std::string first_refusal;  // why the first refused record was refused
};

// Records that fail db/record_check.h are left out and counted (a database edited by hand, or written
// by a faulty tool, still merges its believable records). Refuses to merge a database into itself (the same file under any name).
Result<MergeCounts> MergeDatabase(TuningDatabase& into, const std::string& other_path, int batch_size = 1000);

}  // namespace autotune::db
