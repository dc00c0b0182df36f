#include "tir/lower/lower.h"

#include "tir/lower/pipeline_copies.h"
#include "tir/lower/pipeline_fragments.h"
#include "tir/lower/inject_virtual_thread.h"
#include "tir/lower/insert_barriers.h"
#include "tir/lower/lift_shared_allocations.h"
#include "tir/lower/schedule_ops.h"
#include "tir/lower/storage_flatten.h"
#include "tir/lower/unroll_loops.h"
#include "tir/transform/simplify.h"

namespace autotune::tir {

Result<PrimFunc> Lower(const ScheduleState& state, const LowerOptions& options) {
  auto scheduled = ScheduleOps(state, options.name);
  if (!scheduled) return scheduled.error();
  PrimFunc f = std::move(scheduled).value();
  auto step = [&](const char* name, auto&& pass) {
    pass(f);
    if (options.dump) options.dump(name, f);
  };
  if (options.dump) options.dump("schedule_ops", f);
  step("simplify", [](PrimFunc& g) { g.body = Simplify(g.body); });
  step("inject_virtual_thread", [](PrimFunc& g) { g.body = InjectVirtualThread(g.body); });
  step("lift_shared_allocations", [](PrimFunc& g) { g.body = LiftSharedAllocations(g.body); });
  step("storage_flatten", [](PrimFunc& g) { g = StorageFlatten(g); });
  step("insert_barriers", [](PrimFunc& g) { g.body = InsertBarriers(g.body); });
  step("pipeline_copies", [](PrimFunc& g) { g.body = PipelineCopies(g.body); });
  if (options.pipeline_fragments) step("pipeline_fragments", PipelineFragmentsWithinBudget);
  step("unroll_loops", [](PrimFunc& g) { g.body = UnrollLoops(g.body); });
  step("final_simplify", [](PrimFunc& g) { g.body = Simplify(g.body); });
  return f;
}

}  // namespace autotune::tir
