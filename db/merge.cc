#include "db/merge.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <optional>
#include <vector>

#include "db/record_check.h"

namespace autotune::db {

namespace {

// Same file: same device and inode, whatever the path (a symlink, a hard link, "./x.db").
bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

Result<MergeCounts> MergeDatabase(TuningDatabase& into, const std::string& other_path, int batch_size) {
  if (SameFile(into.path(), other_path)) {
    return MakeError(fmt::format("{}: cannot merge a database into itself", other_path));
  }
  auto other = TuningDatabase::Open(other_path, OpenMode::kReadOnly);
  if (!other) return other.error();

  MergeCounts counts;
  std::vector<TuningRecord> batch;
  std::optional<Error> failed;
  auto flush = [&]() {
    auto n = into.CommitBatch(batch);
    batch.clear();
    if (!n) {
      failed = n.error();
      return false;
    }
    counts.added += *n;
    return true;
  };
  // Streamed in batches: the other database may be larger than memory would like.
  RecordChecker checker;
  auto r = (*other)->ForEachRecord([&](const TuningRecord& record) {
    ++counts.read;
    if (auto c = checker.Check(record); !c) {
      if (counts.refused++ == 0) counts.first_refusal = fmt::format("record {}: {}", counts.read, c.error().message);
      return true;
    }
    batch.push_back(record);
    return batch.size() < static_cast<size_t>(std::max(batch_size, 1)) || flush();
  });
  if (!r) return r.error();
  if (!failed && !batch.empty()) flush();
  if (failed) return *failed;
  counts.duplicates = counts.read - counts.refused - counts.added;
  return counts;
}

}  // namespace autotune::db
