#include "tir/schedule/schedule.h"

#include <fmt/format.h>

#include "support/check.h"
#include "tir/te/compute_dag.h"

namespace autotune::tir {

Schedule::Schedule(const Workload& workload, Target target, uint64_t seed)
    : workload_(std::make_shared<Workload>(workload)), rng_(seed) {
  AUTOTUNE_CHECK(workload.dag, "workload has no compute definition");
  state_ = ScheduleState::Make(*workload.dag, target);
}

Result<Schedule> Schedule::Replay(const Workload& workload, Target target, const Trace& trace, uint64_t seed,
                                  const InstructionRewrite& rewrite) {
  Schedule sch(workload, target, seed);
  ReplayEnv env;
  const InstructionRegistry& registry = BuiltinInstructions();
  size_t n = 0;
  for (const Instruction& recorded : trace.instructions()) {
    ++n;
    const InstructionKind* kind = registry.Find(recorded.kind);
    if (!kind) return MakeError(fmt::format("trace instruction {}: unknown kind '{}'", n, recorded.kind));
    Result<void> r;
    if (rewrite) {
      Instruction inst = recorded;
      r = rewrite(sch, env, inst);
      if (r) r = kind->apply(sch, inst, env);
    } else {
      r = kind->apply(sch, recorded, env);
    }
    if (!r) return MakeError(fmt::format("trace instruction {} ({}): {}", n, recorded.kind, r.error().message));
  }
  return sch;
}

StageRV Schedule::NewStageRV(int stage) {
  stage_rvs_.push_back(stage);
  return StageRV{static_cast<int>(stage_rvs_.size()) - 1};
}

LoopRV Schedule::NewLoopRV(int stage, int iter) {
  loop_rvs_.emplace_back(stage, iter);
  return LoopRV{static_cast<int>(loop_rvs_.size()) - 1};
}

IntRV Schedule::NewIntRV(int64_t value) {
  int_rvs_.push_back(value);
  return IntRV{static_cast<int>(int_rvs_.size()) - 1};
}

void Schedule::Record(std::string kind, nlohmann::json inputs, nlohmann::json attrs, std::vector<std::string> outputs,
                      nlohmann::json decision) {
  Instruction inst;
  inst.kind = std::move(kind);
  inst.inputs = std::move(inputs);
  inst.attrs = std::move(attrs);
  inst.outputs = std::move(outputs);
  inst.decision = std::move(decision);
  trace_.Append(std::move(inst));
}

nlohmann::json Schedule::FactorJson(const FactorArg& f) const {
  if (std::holds_alternative<int64_t>(f)) return std::get<int64_t>(f);
  if (std::holds_alternative<IntRV>(f)) return Sym(std::get<IntRV>(f));
  return nullptr;
}

Result<int64_t> Schedule::FactorValue(const FactorArg& f) const {
  if (std::holds_alternative<int64_t>(f)) return std::get<int64_t>(f);
  if (std::holds_alternative<IntRV>(f)) return Resolve(std::get<IntRV>(f));
  return int64_t{-1};
}

Result<int> Schedule::Resolve(StageRV s) const {
  if (s.id < 0 || s.id >= static_cast<int>(stage_rvs_.size())) return MakeError("unknown stage handle");
  int id = stage_rvs_[s.id];
  if (!state_.IsLive(id)) return MakeError(fmt::format("stage {} was inlined", state_.stages[id].name()));
  return id;
}

Result<std::pair<int, int>> Schedule::Resolve(LoopRV l) const {
  if (l.id < 0 || l.id >= static_cast<int>(loop_rvs_.size())) return MakeError("unknown loop handle");
  auto [stage, iter] = loop_rvs_[l.id];
  if (!state_.IsLive(stage)) return MakeError(fmt::format("the loop's stage {} was inlined", state_.stages[stage].name()));
  const Stage& st = state_.stages[stage];
  if (!st.IsLeaf(iter)) {
    return MakeError(fmt::format("loop {} of stage {} no longer exists (it was split or fused)", st.iters[iter].name,
                                 st.name()));
  }
  return std::make_pair(stage, iter);
}

Result<int64_t> Schedule::Resolve(IntRV v) const {
  if (v.id < 0 || v.id >= static_cast<int>(int_rvs_.size())) return MakeError("unknown integer handle");
  return int_rvs_[v.id];
}

Result<StageRV> Schedule::GetStage(const std::string& name) {
  int id = state_.FindStage(name);
  if (id < 0) return MakeError(fmt::format("no stage named '{}'", name));
  StageRV rv = NewStageRV(id);
  Record("get_stage", nlohmann::json::array(), {{"name", name}}, {StageSymbol(rv.id)});
  return rv;
}

Result<std::vector<LoopRV>> Schedule::GetLoops(StageRV stage) {
  auto s = Resolve(stage);
  if (!s) return s.error();
  std::vector<LoopRV> out;
  std::vector<std::string> syms;
  for (int iter : state_.stages[*s].leaves) {
    out.push_back(NewLoopRV(*s, iter));
    syms.push_back(LoopSymbol(out.back().id));
  }
  Record("get_loops", {Sym(stage)}, nlohmann::json::object(), syms);
  return out;
}

void InstructionRegistry::Register(InstructionKind kind) {
  AUTOTUNE_CHECK(!kinds_.count(kind.name), "instruction kind registered twice");
  std::string name = kind.name;
  kinds_.emplace(std::move(name), std::move(kind));
}

const InstructionKind* InstructionRegistry::Find(const std::string& name) const {
  auto it = kinds_.find(name);
  return it == kinds_.end() ? nullptr : &it->second;
}

const InstructionRegistry& BuiltinInstructions() {
  static const InstructionRegistry* registry = [] {
    auto* r = new InstructionRegistry();
    RegisterBuiltinInstructions(*r);
    return r;
  }();
  return *registry;
}

}  // namespace autotune::tir
