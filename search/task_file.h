// `autotune tune --tasks FILE`: a JSON list of tasks,
//   [{"op": "conv2d", "shape": "N=1,C=64,...", "epilogue": "relu", "weight": 2, "name": "..."}, ...]
// ("epilogue", "weight" (default 1) and "name" are optional). Every problem is an error that names
// the file and the entry; operators and shapes are validated (tir::MakeWorkload).
//
// Rules: the top level is a non-empty array; every entry is an object with string "op" and "shape",
// optional string "epilogue" and "name", and optional "weight", a positive finite number. Any other
// key is an error (a misspelled "wieght" must not silently become weight 1). Entries are counted
// from 1 in messages, e.g. "tasks.json: entry 3 (layer2.0.conv1): weight must be a positive number".
// Entries that are the same workload (the same tir::Workload::Key(): shapes that differ only in the
// order of parameters or in spelling out defaults, like "...,pad=1" and "...,pad=1,stride=1", are the
// same) are merged into the first of them: their weights are added; the first entry's op, shape and
// epilogue text are kept, and its name (or the first non-empty name of the merged entries). The
// result keeps the order of first appearance.
#pragma once

#include <string>
#include <vector>

#include "search/tune_task.h"
#include "support/result.h"

namespace autotune::search {

Result<std::vector<TuneTaskSpec>> LoadTaskFile(const std::string& path);
// The same from JSON text (`origin` names it in errors).
Result<std::vector<TuneTaskSpec>> ParseTaskList(const std::string& json_text, const std::string& origin);
// A task list as `--tasks` reads it (one entry a line; an empty epilogue or name is left out), so that
// a list printed by `autotune networks --json` can be edited and tuned.
std::string TaskListJson(const std::vector<TuneTaskSpec>& tasks);

}  // namespace autotune::search
