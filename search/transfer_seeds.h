// Seeds for the search of a shape from the tuning of other shapes: the fastest stored traces of the
// nearest shapes of the same operator (tir::ShapeDistance), replayed on this shape with their tile
// sizes adapted (tir/schedule/replay_on_shape.h). A user's database grows with every shape tuned in
// it (a network's layers, a model's gemms); without these seeds a new shape's first rounds learn from
// nothing what a neighbour already found. They are measured like any candidate, in the task's first
// round, and seed the evolution from there.
#pragma once

#include <string>
#include <vector>

#include "db/record.h"
#include "tir/ops/workload.h"
#include "tir/schedule/schedule.h"

namespace autotune::search {

// A trace of another shape, replayed on the workload being tuned.
struct TransferredSchedule {
  tir::Schedule schedule;
  std::string from;  // the shape it was measured on (canonical text), for reports
  double from_ms = 0;
};

// Nearest shapes whose records are replayed, and records per shape (the fastest): sixteen traces in
// all, at most a task's first round next to its default schedules.
constexpr int kTransferShapes = 4;
constexpr int kTransferPerShape = 4;

// The records of `others` (valid ones of other workloads, fastest first per workload, as
// TuningDatabase::BestOfEachWorkload gives them) of the same operator as `workload` and of its
// nearest kTransferShapes shapes (the same epilogue before another one, then by distance), replayed on
// `workload`: the fastest record of every neighbour first, nearest neighbour first, then each
// neighbour's second fastest, and so on, at most kTransferPerShape a neighbour. Traces that no longer
// parse or do not replay on this shape are left out; whether a schedule is valid on the target is the
// search's to judge (EvolutionarySearch::Adopt).
std::vector<TransferredSchedule> NearestShapeSchedules(const tir::Workload& workload, tir::Target target,
                                                       const std::vector<db::TuningRecord>& others);

}  // namespace autotune::search
