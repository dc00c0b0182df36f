// bind: binds a spatial loop to a GPU block or thread index (blockIdx.x/y/z, threadIdx.x/y/z) or to
// a virtual thread (vthread), which lowering turns into unrolled register tiles.
#include <fmt/format.h>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

Result<void> Schedule::Bind(LoopRV loop, ThreadTag tag) {
  auto where = Resolve(loop);
  if (!where) return where.error();
  if (tag == ThreadTag::kNone) return MakeError("bind needs a thread tag");
  if (auto r = SetLoopKind(state_, where->first, where->second, ForKind::kThreadBinding, tag); !r) return r;
  Record("bind", {Sym(loop)}, {{"thread", ThreadTagName(tag)}}, {});
  return {};
}

InstructionKind BindInstruction() {
  return {"bind", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto loop = replay::LoopAt(inst, 0, env);
            if (!loop) return loop.error();
            auto name = replay::Attr<std::string>(inst, "thread");
            if (!name) return name.error();
            auto tag = ParseThreadTag(*name);
            if (!tag) return MakeError(fmt::format("unknown thread tag '{}'", *name));
            return sch.Bind(*loop, *tag);
          }};
}

}  // namespace autotune::tir
