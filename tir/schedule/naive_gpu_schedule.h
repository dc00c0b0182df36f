// The unscheduled compute as GPU kernels: every stage computed at root, its output elements spread
// one per thread (spatial loops fused, split by 256, bound to blockIdx.x / threadIdx.x), reductions
// serial in each thread. Slow but simple; it computes the reference on the GPU that every CUDA
// candidate is checked against. A long sum (more than 4,096 terms per output, e.g. a norm) is first
// split in parts (rfactor, partial sums in a kernel of their own): one float32 accumulator over a
// million positive terms drifts by about 4e-4 of the sum, more than the check allows.
#pragma once

#include "tir/ops/workload.h"
#include "support/result.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {

Result<Schedule> NaiveGpuSchedule(const Workload& workload);

}  // namespace autotune::tir
