#include "search/tiling_template.h"

#include <fmt/format.h>

namespace autotune::search {

using namespace autotune::tir;

namespace {

// Unwraps a Result inside a function returning Result<void>.
#define AT_TRY(var, expr)             \
  auto var##_r = (expr);              \
  if (!var##_r) return var##_r.error(); \
  auto var = std::move(var##_r).value()
#define AT_TRY_VOID(expr)    \
  do {                       \
    auto r_ = (expr);        \
    if (!r_) return r_.error(); \
  } while (0)

struct Roles {
  int main = -1;      // the reduction
  int pad = -1;       // an elementwise producer of the reduction (padding), or -1
  int epilogue = -1;  // the elementwise consumer that writes the output, or -1
};

Result<Roles> FindRoles(const ScheduleState& st) {
  Roles r;
  for (int id : st.order) {
    if (st.stages[id].op->IsReduction()) {
      if (r.main >= 0) return MakeError("the tiling template expects one reduction");
      r.main = id;
    }
  }
  if (r.main < 0) return MakeError("the tiling template expects a reduction");
  for (int p : st.Producers(r.main)) {
    if (r.pad >= 0) return MakeError("the tiling template expects at most one producer stage");
    r.pad = p;
  }
  const int out = st.OutputStage();
  if (out != r.main) r.epilogue = out;
  return r;
}

Result<std::vector<IntRV>> Tile(Schedule& sch, LoopRV loop, const TileRequest& req, const TemplateDecisions& d) {
  return sch.SamplePerfectTile(loop, req.levels, req.max_innermost, d.tiles(req));
}

Result<LoopRV> FuseIfMany(Schedule& sch, const std::vector<LoopRV>& loops) {
  if (loops.size() == 1) return loops[0];
  return sch.Fuse(loops);
}

Result<IntRV> SampleUnroll(Schedule& sch, const std::vector<int64_t>& candidates, const TemplateDecisions& d) {
  std::vector<double> probs(candidates.size(), 1.0 / candidates.size());
  return sch.SampleCategorical(candidates, probs, d.unroll(candidates));
}

Result<void> ApplyCuda(Schedule& sch, const Roles& roles, const TemplateDecisions& d) {
  const ScheduleState& st = sch.state();
  const std::string main_name = st.stages[roles.main].name();
  const std::string pad_name = roles.pad >= 0 ? st.stages[roles.pad].name() : "";
  const std::string epi_name = roles.epilogue >= 0 ? st.stages[roles.epilogue].name() : "";
  AT_TRY(M, sch.GetStage(main_name));
  AT_TRY(local, sch.CacheWrite(M, Scope::kLocal));
  // Shared-memory copies of everything the accumulation reads.
  std::vector<StageRV> shared;
  const int local_id = sch.state().FindStage(main_name + "_local");
  for (const BufferNode* b : te::ReadBuffers(sch.state().stages[local_id].op->body)) {
    if (b->name == pad_name) {
      AT_TRY(pad, sch.GetStage(pad_name));
      AT_TRY(s, sch.CacheRead(pad, Scope::kShared, {local}));
      shared.push_back(s);
    } else {
      AT_TRY(s, sch.CacheReadInput(b->name, Scope::kShared, {local}));
      shared.push_back(s);
    }
  }
  if (!pad_name.empty()) {
    AT_TRY(pad, sch.GetStage(pad_name));
    AT_TRY_VOID(sch.ComputeInline(pad));
  }
  if (!epi_name.empty()) {
    AT_TRY(epi, sch.GetStage(epi_name));
    AT_TRY_VOID(sch.ReverseComputeInline(epi));
  }
  // Output tiles: block, virtual thread, thread, and the per-thread rest.
  AT_TRY(out_loops, sch.GetLoops(M));
  const int ns = static_cast<int>(out_loops.size());
  std::vector<LoopRV> blocks, vthreads, threads, rests;
  std::vector<IntRV> thread_factors, inner_factors;
  for (int a = 0; a < ns; ++a) {
    auto [sid, iter] = *sch.Resolve(out_loops[a]);
    TileRequest req{false, a, ns, sch.state().stages[sid].iters[iter].extent, 5, 16};
    AT_TRY(t, Tile(sch, out_loops[a], req, d));
    AT_TRY(parts, sch.Split(out_loops[a], {t[0], t[1], t[2], std::monostate{}}));
    blocks.push_back(parts[0]);
    vthreads.push_back(parts[1]);
    threads.push_back(parts[2]);
    rests.push_back(parts[3]);
    thread_factors.push_back(t[2]);
    inner_factors.push_back(t[4]);
  }
  std::vector<LoopRV> order = blocks;
  order.insert(order.end(), vthreads.begin(), vthreads.end());
  order.insert(order.end(), threads.begin(), threads.end());
  order.insert(order.end(), rests.begin(), rests.end());
  AT_TRY_VOID(sch.Reorder(order));
  AT_TRY(bx, FuseIfMany(sch, blocks));
  AT_TRY_VOID(sch.Bind(bx, ThreadTag::kBlockIdxX));
  AT_TRY(vx, FuseIfMany(sch, vthreads));
  AT_TRY_VOID(sch.Bind(vx, ThreadTag::kVThread));
  AT_TRY(tx, FuseIfMany(sch, threads));
  AT_TRY_VOID(sch.Bind(tx, ThreadTag::kThreadIdxX));
  // Register accumulation per thread: RRSRS.
  AT_TRY_VOID(sch.ComputeAt(local, tx));
  AT_TRY(ll, sch.GetLoops(local));
  std::vector<LoopRV> s3, s4, r0, r1, r2;
  for (int a = 0; a < ns; ++a) {
    AT_TRY(parts, sch.Split(ll[a], {std::monostate{}, inner_factors[a]}));
    s3.push_back(parts[0]);
    s4.push_back(parts[1]);
  }
  const int nr = static_cast<int>(ll.size()) - ns;
  for (int r = 0; r < nr; ++r) {
    auto [sid, iter] = *sch.Resolve(ll[ns + r]);
    TileRequest req{true, r, nr, sch.state().stages[sid].iters[iter].extent, 3, 0};
    AT_TRY(t, Tile(sch, ll[ns + r], req, d));
    AT_TRY(parts, sch.Split(ll[ns + r], {t[0], t[1], t[2]}));
    r0.push_back(parts[0]);
    r1.push_back(parts[1]);
    r2.push_back(parts[2]);
  }
  std::vector<LoopRV> lorder = r0;
  for (auto* group : {&r1, &s3, &r2, &s4}) lorder.insert(lorder.end(), group->begin(), group->end());
  AT_TRY_VOID(sch.Reorder(lorder));
  // Cooperative loads into shared memory at the outer reduction loop, spread over all threads.
  for (const auto& s : shared) {
    AT_TRY_VOID(sch.ComputeAt(s, r0.back()));
    AT_TRY(sl, sch.GetLoops(s));
    AT_TRY(fused, FuseIfMany(sch, sl));
    // Each thread loads `vec` consecutive elements per step: wide loads where aligned.
    const std::vector<int64_t> widths = {1, 2, 4};
    std::vector<double> probs(widths.size(), 1.0 / widths.size());
    AT_TRY(vec, sch.SampleCategorical(widths, probs, d.vector(widths)));
    std::vector<FactorArg> factors = {std::monostate{}};
    for (const auto& f : thread_factors) factors.push_back(f);
    factors.push_back(vec);
    AT_TRY(parts, sch.Split(fused, factors));
    AT_TRY(t, FuseIfMany(sch, std::vector<LoopRV>(parts.begin() + 1, parts.end() - 1)));
    AT_TRY_VOID(sch.Bind(t, ThreadTag::kThreadIdxX));
    AT_TRY_VOID(sch.Vectorize(parts.back()));
  }
  AT_TRY(unroll, SampleUnroll(sch, {0, 16, 64, 512, 1024}, d));
  AT_TRY_VOID(sch.AnnotateUnroll(bx, unroll));
  return {};
}

Result<void> ApplyCpu(Schedule& sch, const Roles& roles, const TemplateDecisions& d) {
  const ScheduleState& st = sch.state();
  const std::string main_name = st.stages[roles.main].name();
  const std::string pad_name = roles.pad >= 0 ? st.stages[roles.pad].name() : "";
  const std::string epi_name = roles.epilogue >= 0 ? st.stages[roles.epilogue].name() : "";
  if (!pad_name.empty()) {
    AT_TRY(pad, sch.GetStage(pad_name));
    AT_TRY_VOID(sch.ComputeInline(pad));
  }
  AT_TRY(M, sch.GetStage(main_name));
  AT_TRY(loops, sch.GetLoops(M));
  const int n = static_cast<int>(loops.size());
  const int ns = static_cast<int>(sch.state().stages[roles.main].op->axis.size());
  const int nr = n - ns;
  std::vector<LoopRV> s0, s1, s2, s3, r0, r1;
  for (int a = 0; a < n; ++a) {
    auto [sid, iter] = *sch.Resolve(loops[a]);
    const bool reduce = a >= ns;
    TileRequest req{reduce, reduce ? a - ns : a, reduce ? nr : ns, sch.state().stages[sid].iters[iter].extent,
                    reduce ? 2 : 4, reduce ? 0 : 64};
    AT_TRY(t, Tile(sch, loops[a], req, d));
    std::vector<FactorArg> factors(t.begin(), t.end());
    AT_TRY(parts, sch.Split(loops[a], factors));
    if (reduce) {
      r0.push_back(parts[0]);
      r1.push_back(parts[1]);
    } else {
      s0.push_back(parts[0]);
      s1.push_back(parts[1]);
      s2.push_back(parts[2]);
      s3.push_back(parts[3]);
    }
  }
  std::vector<LoopRV> order = s0;
  for (auto* group : {&s1, &r0, &s2, &r1, &s3}) order.insert(order.end(), group->begin(), group->end());
  AT_TRY_VOID(sch.Reorder(order));
  AT_TRY(outer, FuseIfMany(sch, s0));
  AT_TRY_VOID(sch.Parallel(outer));
  AT_TRY_VOID(sch.Vectorize(s3.back()));
  if (!epi_name.empty()) {
    AT_TRY(epi, sch.GetStage(epi_name));
    AT_TRY_VOID(sch.ReverseComputeAt(epi, outer));
    AT_TRY(el, sch.GetLoops(epi));
    AT_TRY_VOID(sch.Vectorize(el.back()));
  }
  AT_TRY(unroll, SampleUnroll(sch, {0, 16, 64, 512}, d));
  AT_TRY_VOID(sch.AnnotateUnroll(outer, unroll));
  return {};
}

}  // namespace

Result<void> ApplyTilingTemplate(Schedule& sch, const TemplateDecisions& decisions) {
  auto roles = FindRoles(sch.state());
  if (!roles) return roles.error();
  return sch.target() == TargetKind::kCuda ? ApplyCuda(sch, *roles, decisions) : ApplyCpu(sch, *roles, decisions);
}

}  // namespace autotune::search
