// `tune --tasks FILE`'s parser. Property: an accepted list, printed as `networks --json` prints one,
// parses back to the same tasks.
#include "search/task_file.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace autotune;
  auto tasks = search::ParseTaskList(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!tasks) return 0;
  FUZZ_CHECK(!tasks->empty());
  auto back = search::ParseTaskList(search::TaskListJson(*tasks), "printed");
  FUZZ_CHECK(back);
  FUZZ_CHECK(back->size() == tasks->size());
  for (size_t i = 0; i < tasks->size(); ++i) {
    FUZZ_CHECK((*back)[i].op == (*tasks)[i].op && (*back)[i].shape == (*tasks)[i].shape);
    FUZZ_CHECK((*back)[i].weight == (*tasks)[i].weight && (*back)[i].name == (*tasks)[i].name);
  }
  return 0;
}
