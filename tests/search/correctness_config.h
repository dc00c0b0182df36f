// The measurement settings of the correctness tests: one run, no warm-up or timing floor, a fast
// compile. (The GPU test of every operator keeps its own: a run timeout, no CPU flags.)
#pragma once

#include "measure/measure_config.h"

namespace autotune::search {

inline measure::MeasureConfig CorrectnessConfig() {
  measure::MeasureConfig c;
  c.warmup = 0;
  c.repeats = 1;
  c.min_repeat_ms = 0;
  c.flush_cache = false;
  c.num_threads = 2;
  c.extra_cflags = {"-O1"};  // correctness only: compile fast
  return c;
}

}  // namespace autotune::search
