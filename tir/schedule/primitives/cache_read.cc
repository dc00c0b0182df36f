// cache_read: a new stage copies a producer's output (a compute stage or a kernel input) into a
// buffer of the given scope (shared or local); the given readers read the copy instead. It is
// computed at root until compute_at moves it.
#include <fmt/format.h>

#include <algorithm>

#include "tir/schedule/primitives/primitives.h"
#include "tir/schedule/primitives/replay_util.h"

namespace autotune::tir {

namespace {

// Shared by both entry points: `source` is the operation whose output is copied.
Result<int> AddCacheRead(ScheduleState& state, te::Operation source, Scope scope, const std::vector<int>& readers) {
  if (scope == Scope::kGlobal) return MakeError("cache_read needs a shared or local scope");
  if (readers.empty()) return MakeError("cache_read needs at least one reader");
  for (int r : readers) {
    bool reads = false;
    for (const BufferNode* b : te::ReadBuffers(state.stages[r].op->body)) reads |= b == source->buffer.get();
    if (!reads) return MakeError(fmt::format("stage {} does not read {}", state.stages[r].name(), source->name));
  }
  std::vector<std::string> names;
  for (size_t d = 0; d < source->shape.size(); ++d) names.push_back(fmt::format("ax{}", d));
  std::string name = UniqueStageName(state, fmt::format("{}_{}", source->name, ScopeName(scope)));
  auto copy = te::Compute(name, source->shape, names, [&](const std::vector<Var>& v) {
    return te::Read(source, std::vector<Expr>(v.begin(), v.end()));
  });
  // Before the first reader in topological order.
  int before = -1;
  for (int id : state.order) {
    if (std::find(readers.begin(), readers.end(), id) != readers.end()) {
      before = id;
      break;
    }
  }
  int sid = state.AddStage(copy, before);
  state.stages[sid].scope = scope;
  state.RedirectReads(readers, source->buffer, copy->buffer);
  return sid;
}

}  // namespace

Result<StageRV> Schedule::CacheRead(StageRV producer, Scope scope, const std::vector<StageRV>& readers) {
  auto p = Resolve(producer);
  if (!p) return p.error();
  std::vector<int> rs;
  nlohmann::json inputs = nlohmann::json::array({Sym(producer)});
  for (const auto& r : readers) {
    auto id = Resolve(r);
    if (!id) return id.error();
    rs.push_back(*id);
    inputs.push_back(Sym(r));
  }
  auto sid = AddCacheRead(state_, state_.stages[*p].op, scope, rs);
  if (!sid) return sid.error();
  StageRV out = NewStageRV(*sid);
  Record("cache_read", inputs, {{"scope", ScopeName(scope)}}, {StageSymbol(out.id)});
  return out;
}

Result<StageRV> Schedule::CacheReadInput(const std::string& input, Scope scope, const std::vector<StageRV>& readers) {
  te::Operation source;
  for (const auto& in : state_.inputs) {
    if (in->name == input) source = in;
  }
  if (!source) return MakeError(fmt::format("no kernel input named '{}'", input));
  std::vector<int> rs;
  nlohmann::json inputs = nlohmann::json::array({nullptr});
  for (const auto& r : readers) {
    auto id = Resolve(r);
    if (!id) return id.error();
    rs.push_back(*id);
    inputs.push_back(Sym(r));
  }
  auto sid = AddCacheRead(state_, source, scope, rs);
  if (!sid) return sid.error();
  StageRV out = NewStageRV(*sid);
  Record("cache_read", inputs, {{"scope", ScopeName(scope)}, {"input", input}}, {StageSymbol(out.id)});
  return out;
}

InstructionKind CacheReadInstruction() {
  return {"cache_read", [](Schedule& sch, const Instruction& inst, ReplayEnv& env) -> Result<void> {
            auto scope_name = replay::Attr<std::string>(inst, "scope");
            if (!scope_name) return scope_name.error();
            Scope scope;
            if (*scope_name == "shared") scope = Scope::kShared;
            else if (*scope_name == "local") scope = Scope::kLocal;
            else return MakeError(fmt::format("cache_read scope '{}' is not shared or local", *scope_name));
            std::vector<StageRV> readers;
            for (size_t i = 1; i < inst.inputs.size(); ++i) {
              auto r = replay::StageAt(inst, i, env);
              if (!r) return r.error();
              readers.push_back(*r);
            }
            Result<StageRV> out = MakeError("");
            if (inst.attrs.contains("input")) {
              auto input = replay::Attr<std::string>(inst, "input");
              if (!input) return input.error();
              out = sch.CacheReadInput(*input, scope, readers);
            } else {
              auto p = replay::StageAt(inst, 0, env);
              if (!p) return p.error();
              out = sch.CacheRead(*p, scope, readers);
            }
            if (!out) return out.error();
            return replay::BindAll(env.stages, inst, std::vector<StageRV>{*out});
          }};
}

}  // namespace autotune::tir
