// The unscheduled compute as GPU kernels: every stage computed at root, its output elements spread
// one per thread (spatial loops fused, split by 256, bound to blockIdx.x / threadIdx.x), reductions
// serial in each thread. Slow but simple; it computes the reference on the GPU that every CUDA
// candidate is checked against.
#pragma once

#include "tir/ops/workload.h"
#include "support/result.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {

Result<Schedule> NaiveGpuSchedule(const Workload& workload);

}  // namespace autotune::tir
