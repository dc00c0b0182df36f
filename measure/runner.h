// Runner: runs built candidates of one workload, checks them against the reference and times them.
// Local and remote measurement are two implementations of this interface; the tuning loop does not
// know where a kernel runs.
#pragma once

#include <string>
#include <vector>

#include "measure/builder.h"
#include "measure/measure_result.h"
#include "tir/ops/workload.h"

namespace autotune::measure {

class Runner {
 public:
  virtual ~Runner() = default;
  // One result per build, in order. A failed build comes back as its error (with its build time).
  virtual std::vector<MeasureResult> Run(const tir::Workload& workload, const std::vector<BuildResult>& builds) = 0;
  // Why the last Run measured nothing of its batch (remote: no worker left), "" when it did. The
  // tuner stops then, storing nothing of that batch, rather than recording failures that are not
  // the candidates' own.
  virtual std::string Unavailable() const { return ""; }
  // Run calls it takes at once from different threads. A remote runner takes two, so that a worker
  // compiles the next batch while it runs this one; a local runner owns one device process: one.
  virtual int ConcurrentRuns() const { return 1; }
  // Screening (measure/repeat_screen.h) on or off for the Runs that follow. A remote runner's
  // workers screen by the job's ratio whatever this says.
  virtual void SetScreening(bool /*on*/) {}
};

}  // namespace autotune::measure
