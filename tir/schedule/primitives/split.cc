// split: one loop into n nested loops with the given factors (outermost first). At most one factor
// may be left to infer; when the factors do not divide the extent, the extra iterations are masked
// by predicates in lowering.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"
#include "tir/int_arith.h"

namespace autotune::tir {

namespace {
// A block holds at most 1024 threads: the widest cooperative split of a short loop.
constexpr int64_t kMaxSplitFactorBeyondExtent = 1024;
}  // namespace

Result<std::vector<LoopRV>> Schedule::Split(LoopRV loop, const std::vector<FactorArg>& factors) {
  auto where = Resolve(loop);
  if (!where) return where.error();
  auto [sid, iter] = *where;
  if (factors.size() < 2) return MakeError("split needs at least two factors");
  std::vector<int64_t> f;
  int inferred = -1;
  for (size_t i = 0; i < factors.size(); ++i) {
    auto v = FactorValue(factors[i]);
    if (!v) return v.error();
    if (*v == -1) {
      if (inferred >= 0) return MakeError("split can infer at most one factor");
      inferred = static_cast<int>(i);
    } else if (*v < 1) {
      return MakeError(fmt::format("split factor {} must be positive", *v));
    }
    f.push_back(*v);
  }
  Stage& st = state_.stages[sid];
  const int64_t extent = st.iters[iter].extent;
  // No factor beyond the loop (or a block's thread count, for cooperative loads of few elements):
  // larger ones only make loops of masked-off iterations, and their products could overflow.
  const int64_t largest = std::max<int64_t>(extent, kMaxSplitFactorBeyondExtent);
  for (int64_t x : f) {
    if (x > largest) {
      return MakeError(fmt::format("split factor {} exceeds the {} iterations of loop {}", x, extent, st.iters[iter].name));
    }
  }
  if (inferred >= 0) {
    int64_t known = 1;
    for (size_t i = 0; i < f.size(); ++i) {
      if (static_cast<int>(i) != inferred) known = MulOrCap(known, f[i], INT64_MAX);
    }
    f[inferred] = known >= extent ? 1 : (extent + known - 1) / known;
  }
  int64_t product = 1;
  for (int64_t x : f) product = MulOrCap(product, x, INT64_MAX);
  if (product < extent) {
    return MakeError(fmt::format("split factors cover {} of the {} iterations of loop {}", product, extent,
                                 st.iters[iter].name));
  }
  if (inferred < 0 && product >= 2 * extent) {
    // Explicit factors that mostly mask iterations off are almost certainly a mistake. With an
    // inferred factor the product may exceed the extent on purpose: e.g. a cooperative load split
    // by the consumer's thread count, more threads than elements.
    return MakeError(fmt::format("split factors make {} iterations for a loop of {}", product, extent));
  }
  // Chain of binary splits, innermost first: rest -> (rest', inner_i).
  const Iter parent = st.iters[iter];
  std::vector<int> parts(f.size());
  int rest = iter;
  int64_t rest_extent = extent;
  for (size_t i = f.size() - 1; i >= 1; --i) {
    Iter outer = parent, inner = parent;
    outer.kind = inner.kind = ForKind::kSerial;
    outer.tag = inner.tag = ThreadTag::kNone;
    outer.auto_unroll_max_step = inner.auto_unroll_max_step = 0;
    inner.extent = f[i];
    inner.name = fmt::format("{}_{}", parent.name, i);
    inner.var = MakeVar(inner.name);
    rest_extent = i == 1 ? f[0] : (rest_extent + f[i] - 1) / f[i];
    outer.extent = rest_extent;
    outer.name = i == 1 ? fmt::format("{}_0", parent.name) : fmt::format("{}_r{}", parent.name, i);
    outer.var = MakeVar(outer.name);
    int oid = static_cast<int>(st.iters.size());
    st.iters.push_back(outer);
    int iid = static_cast<int>(st.iters.size());
    st.iters.push_back(inner);
    st.relations.push_back({Relation::Kind::kSplit, rest, oid, iid});
    parts[i] = iid;
    rest = oid;
  }
  parts[0] = rest;
  // Stages computed in the split loop move to its innermost part: same computation per iteration.
  for (auto& other : state_.stages) {
    if (other.attach_stage == sid && other.attach_iter == iter) other.attach_iter = parts.back();
  }
  int pos = st.LeafPosition(iter);
  st.leaves.erase(st.leaves.begin() + pos);
  st.leaves.insert(st.leaves.begin() + pos, parts.begin(), parts.end());

  std::vector<LoopRV> out;
  std::vector<std::string> syms;
  nlohmann::json inputs = nlohmann::json::array({Sym(loop)});
  for (const auto& fa : factors) inputs.push_back(FactorJson(fa));
  for (int p : parts) {
    out.push_back(NewLoopRV(sid, p));
    syms.push_back(LoopSymbol(out.back().id));
  }
  Record("split", inputs, nlohmann::json::object(), syms);
  return out;
}

InstructionKind SplitInstruction() {
  return {"split", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto loop = replay::LoopAt(inst, 0, env);
            if (!loop) return loop.error();
            std::vector<FactorArg> factors;
            for (size_t i = 1; i < inst.inputs.size(); ++i) {
              auto f = replay::FactorAt(inst, i, env);
              if (!f) return f.error();
              factors.push_back(*f);
            }
            auto loops = sch.Split(*loop, factors);
            if (!loops) return loops.error();
            return replay::BindAll(env.loops, inst, *loops);
          }};
}

}  // namespace autotune::tir
