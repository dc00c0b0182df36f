#include "cli/measure_options.h"

namespace autotune::cli {

void AddMeasureOptions(CLI::App& cmd, measure::MeasureConfig& c) {
  cmd.add_option("--repeats", c.repeats, "timed repeats per candidate; the median is the figure")
      ->check(CLI::Range(1, 1000));
  cmd.add_option("--min-repeat-ms", c.min_repeat_ms, "each repeat runs the kernel at least this long")
      ->check(CLI::Range(0.0, 60000.0));
  cmd.add_option("--warmup", c.warmup, "untimed runs before timing")->check(CLI::Range(0, 1000));
  cmd.add_option("--threads", c.num_threads, "CPU threads of the kernel (0: all cores)")->check(CLI::Range(0, 4096));
  cmd.add_option("--build-timeout", c.build_timeout_s, "seconds allowed to compile a candidate")
      ->check(CLI::Range(1.0, 3600.0));
  cmd.add_option("--run-timeout", c.run_timeout_s, "seconds allowed to check and time a candidate")
      ->check(CLI::Range(1.0, 3600.0));
  cmd.add_option("--arch", c.cuda_arch, "cuda: GPU architecture to compile for (default: the GPU's, e.g. sm_90)");
  cmd.add_option("--device", c.cuda_device, "cuda: GPU ordinal")->check(CLI::Range(0, 64));
}

}  // namespace autotune::cli
