// Every schedule primitive: applying it records an instruction; the trace survives JSON and replays
// on a fresh workload to structurally equal lowered IR. Illegal steps are error values.
#include <gtest/gtest.h>

#include <functional>

#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/printer.h"
#include "tir/schedule/schedule.h"
#include "tir/structural_equal.h"

namespace autotune::tir {
namespace {

Workload Make(const std::string& op, const std::string& shape, const std::string& epilogue = "") {
  auto w = MakeWorkload(op, shape, epilogue);
  EXPECT_TRUE(w) << (w ? "" : w.error().message);
  return *w;
}

// Builds a schedule with `build`, round-trips its trace through JSON text, replays it on a freshly
// made workload and checks the lowered functions are structurally equal.
void CheckRoundTrip(const std::string& op, const std::string& shape, const std::string& epilogue, TargetKind target,
                    const std::function<void(Schedule&)>& build, const std::string& expect_kind) {
  Workload w1 = Make(op, shape, epilogue);
  Schedule sch(w1, target, 7);
  build(sch);
  bool found = false;
  for (const auto& inst : sch.trace().instructions()) found |= inst.kind == expect_kind;
  EXPECT_TRUE(found) << "trace has no " << expect_kind << ":\n" << sch.trace().ToText();
  auto f1 = Lower(sch.state());
  ASSERT_TRUE(f1) << f1.error().message;

  const std::string text = sch.trace().ToJson().dump(2);
  auto parsed = Trace::FromJson(nlohmann::json::parse(text));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->ToJson(), sch.trace().ToJson());

  Workload w2 = Make(op, shape, epilogue);
  auto replayed = Schedule::Replay(w2, target, *parsed, 99);
  ASSERT_TRUE(replayed) << replayed.error().message;
  EXPECT_EQ(replayed->trace().ToJson(), sch.trace().ToJson());
  auto f2 = Lower(replayed->state());
  ASSERT_TRUE(f2) << f2.error().message;
  EXPECT_TRUE(StructuralEqual(f1->body, f2->body)) << ToString(f1->body) << "\nvs\n" << ToString(f2->body);
  // Different variable nodes, same structure: the replay really built new IR.
  EXPECT_NE(f1->body, f2->body);
}

#define OK(expr)                                  \
  ({                                              \
    auto r_ = (expr);                             \
    EXPECT_TRUE(r_) << #expr << ": " << (r_ ? "" : r_.error().message); \
    std::move(r_).value();                        \
  })
#define OKV(expr)                                 \
  do {                                            \
    auto r_ = (expr);                             \
    EXPECT_TRUE(r_) << #expr << ": " << (r_ ? "" : r_.error().message); \
  } while (0)

const std::string kGemm = "M=24,N=20,K=12";

TEST(SchedulePrimitives, SplitWithLiteralInferredAndSampledFactors) {
  CheckRoundTrip("gemm", kGemm, "", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    OK(s.Split(l[0], {std::monostate{}, int64_t{5}}));  // 24 = 5 * 5 - 1: a predicate
    auto t = OK(s.SamplePerfectTile(l[1], 3, 4));
    OK(s.Split(l[1], {t[0], t[1], t[2]}));
  }, "split");
}

TEST(SchedulePrimitives, ReorderAndFuse) {
  CheckRoundTrip("gemm", kGemm, "", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    OKV(s.Reorder({l[1], l[0]}));
    OK(s.Fuse({l[1], l[0]}));
  }, "fuse");
}

TEST(SchedulePrimitives, ParallelVectorizeUnrollAnnotate) {
  CheckRoundTrip("gemm", kGemm, "", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    auto j = OK(s.Split(l[1], {std::monostate{}, int64_t{4}}));
    OKV(s.Reorder({l[0], j[0], l[2], j[1]}));
    OKV(s.Parallel(l[0]));
    OKV(s.Vectorize(j[1]));
    OKV(s.Unroll(j[0]));
    auto u = OK(s.SampleCategorical({0, 16, 64}, {0.2, 0.3, 0.5}));
    OKV(s.AnnotateUnroll(l[0], u));
  }, "annotate_unroll");
}

TEST(SchedulePrimitives, BindEveryThreadTag) {
  CheckRoundTrip("batch_matmul", "B=2,M=8,N=8,K=4", "", TargetKind::kCuda, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    auto i = OK(s.Split(l[1], {int64_t{2}, int64_t{2}, int64_t{2}}));
    auto j = OK(s.Split(l[2], {int64_t{2}, int64_t{2}, int64_t{2}}));
    OKV(s.Reorder({l[0], i[0], j[0], i[1], j[1], i[2], j[2]}));
    OKV(s.Bind(l[0], ThreadTag::kBlockIdxZ));
    OKV(s.Bind(i[0], ThreadTag::kBlockIdxY));
    OKV(s.Bind(j[0], ThreadTag::kBlockIdxX));
    OKV(s.Bind(i[1], ThreadTag::kVThread));
    OKV(s.Bind(j[1], ThreadTag::kThreadIdxZ));
    OKV(s.Bind(i[2], ThreadTag::kThreadIdxY));
    OKV(s.Bind(j[2], ThreadTag::kThreadIdxX));
  }, "bind");
}

// A gemm's rows over blocks of 4 threads, the accumulator local per thread, a shared copy of A not
// yet placed: what the shared-copy tests build on.
struct SharedCopyOfA {
  StageRV local, As;
  std::vector<LoopRV> local_loops;
};
SharedCopyOfA TileWithSharedA(Schedule& s) {
  auto C = OK(s.GetStage("C"));
  auto local = OK(s.CacheWrite(C, Scope::kLocal));
  auto As = OK(s.CacheReadInput("A", Scope::kShared, {local}));
  auto l = OK(s.GetLoops(C));
  auto i = OK(s.Split(l[0], {std::monostate{}, int64_t{4}}));
  OKV(s.Bind(i[0], ThreadTag::kBlockIdxX));
  OKV(s.Bind(i[1], ThreadTag::kThreadIdxX));
  OKV(s.ComputeAt(local, i[1]));
  return {local, As, OK(s.GetLoops(local))};
}

TEST(SchedulePrimitives, CacheReadCacheWriteComputeAtStorageAlign) {
  CheckRoundTrip("gemm", kGemm, "", TargetKind::kCuda, [](Schedule& s) {
    auto [local, As, ll] = TileWithSharedA(s);
    OKV(s.ComputeAt(As, ll[2]));
    OKV(s.StorageAlign(As, 0, 8, 1));
    auto Bl = OK(s.CacheReadInput("B", Scope::kLocal, {local}));
    OKV(s.ComputeAt(Bl, ll[2]));
  }, "storage_align");
}

// A double-buffered shared copy: the trace replays it, and lowering pipelines its refill loop.
TEST(SchedulePrimitives, DoubleBufferOfASharedCopy) {
  CheckRoundTrip("gemm", kGemm, "", TargetKind::kCuda, [](Schedule& s) {
    auto [local, As, ll] = TileWithSharedA(s);
    auto k = OK(s.Split(ll[2], {std::monostate{}, int64_t{4}}));
    OKV(s.Reorder({k[0], ll[0], ll[1], k[1]}));
    OKV(s.ComputeAt(As, k[0]));
    auto on = OK(s.SampleCategorical({0, 1}, {0.5, 0.5}, 1));
    OKV(s.DoubleBuffer(As, on));
    auto f = Lower(s.state());
    ASSERT_TRUE(f) << f.error().message;
    const std::string text = ToString(f->body);
    EXPECT_NE(text.find("barrier(async_wait=0)"), std::string::npos) << text;
    EXPECT_NE(text.find("barrier(async_wait=1)"), std::string::npos) << text;
  }, "double_buffer");

  // Refilled together with an unmarked copy of B: the mark is a request, and that loop stays as it
  // is; with B marked too, it is pipelined.
  auto pipelined = [](bool mark_b) {
    Workload w = Make("gemm", kGemm);
    Schedule s(w, TargetKind::kCuda);
    auto [local, As, ll] = TileWithSharedA(s);
    auto Bs = OK(s.CacheReadInput("B", Scope::kShared, {local}));
    OKV(s.ComputeAt(As, ll[2]));
    OKV(s.ComputeAt(Bs, ll[2]));
    OKV(s.DoubleBuffer(As, int64_t{1}));
    if (mark_b) OKV(s.DoubleBuffer(Bs, int64_t{1}));
    auto f = Lower(s.state());
    EXPECT_TRUE(f) << f.error().message;
    return f && ToString(f->body).find("barrier(async_wait=1)") != std::string::npos;
  };
  EXPECT_FALSE(pipelined(false));
  EXPECT_TRUE(pipelined(true));

  Workload w = Make("gemm", kGemm);
  Schedule s(w, TargetKind::kCuda);
  auto C = OK(s.GetStage("C"));
  auto Al = OK(s.CacheReadInput("A", Scope::kLocal, {C}));
  auto As = OK(s.CacheReadInput("B", Scope::kShared, {C}));
  auto no = s.DoubleBuffer(Al, int64_t{1});
  ASSERT_FALSE(no);
  EXPECT_NE(no.error().message.find("applies to shared copies"), std::string::npos) << no.error().message;
  auto two = s.DoubleBuffer(As, int64_t{2});
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().message.find("0 (off) or 1 (on)"), std::string::npos) << two.error().message;
}

TEST(SchedulePrimitives, CacheReadOfAStageAndComputeInline) {
  CheckRoundTrip("conv2d", "N=1,C=2,H=6,W=6,K=3,R=3,S=3,pad=1", "", TargetKind::kCpu, [](Schedule& s) {
    auto conv = OK(s.GetStage("conv"));
    auto pad = OK(s.GetStage("pad"));
    auto shared = OK(s.CacheRead(pad, Scope::kLocal, {conv}));
    OKV(s.ComputeInline(pad));
    auto l = OK(s.GetLoops(conv));
    OKV(s.ComputeAt(shared, l[2]));
  }, "compute_inline");
}

// A convolution's sliding-window read reindexed by its own iterators: the im2col matrix
// [rc, ry, rx, n, p, q], copied and inlined into the copy as the im2col sketch does.
TEST(SchedulePrimitives, ReIndexOfASlidingWindowRead) {
  CheckRoundTrip("conv2d", "N=2,C=2,H=6,W=5,K=3,R=3,S=2,stride=2,pad=1", "", TargetKind::kCpu, [](Schedule& s) {
    auto conv = OK(s.GetStage("conv"));
    auto col = OK(s.ReIndex(conv, "pad"));
    const Stage& st = s.state().stages[OK(s.Resolve(col))];
    EXPECT_EQ(st.name(), "pad_reindex");
    EXPECT_EQ(st.op->shape, (std::vector<int64_t>{2, 3, 2, 2, 3, 3}));  // C R S N P Q
    auto copy = OK(s.CacheRead(col, Scope::kLocal, {conv}));
    OKV(s.ComputeInline(OK(s.GetStage("pad"))));
    OKV(s.ComputeInline(col));
    auto l = OK(s.GetLoops(conv));
    OKV(s.ComputeAt(copy, l[4]));
  }, "reindex");
  // Without padding the read is of the kernel input itself.
  CheckRoundTrip("conv2d", "N=1,C=2,H=5,W=5,K=2,R=3,S=3", "", TargetKind::kCpu, [](Schedule& s) {
    auto col = OK(s.ReIndex(OK(s.GetStage("conv")), "data"));
    EXPECT_EQ(s.state().stages[OK(s.Resolve(col))].op->shape, (std::vector<int64_t>{2, 3, 3, 1, 3, 3}));
  }, "reindex");
}

TEST(SchedulePrimitives, ReverseComputeAtAndComputeRoot) {
  CheckRoundTrip("gemm", kGemm, "bias,relu", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto E = OK(s.GetStage("C_bias_relu"));
    auto pad = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    auto i = OK(s.Split(l[0], {std::monostate{}, int64_t{8}}));
    OKV(s.ReverseComputeAt(E, i[0]));
    OKV(s.ComputeRoot(pad));
  }, "reverse_compute_at");
}

TEST(SchedulePrimitives, ReverseComputeInlineIntoTheCopyOut) {
  CheckRoundTrip("gemm", kGemm, "bias,relu", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    OK(s.CacheWrite(C, Scope::kLocal));
    auto E = OK(s.GetStage("C_bias_relu"));
    OKV(s.ReverseComputeInline(E));
  }, "reverse_compute_inline");
}

TEST(SchedulePrimitives, RFactorOfASplitReduction) {
  CheckRoundTrip("gemm", "M=4,N=4,K=30", "", TargetKind::kCpu, [](Schedule& s) {
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    auto k = OK(s.Split(l[2], {std::monostate{}, int64_t{4}}));  // 30 = 8 * 4 - 2: predicated
    auto rf = OK(s.RFactor(C, k[1]));
    auto rl = OK(s.GetLoops(rf));
    OKV(s.Parallel(rl[0]));
  }, "rfactor");
}

// ---- Illegal steps are error values and leave the state usable ----

TEST(SchedulePrimitives, IllegalStepsAreErrors) {
  Workload w = Make("gemm", kGemm, "bias");
  Schedule s(w, TargetKind::kCpu);
  auto C = OK(s.GetStage("C"));
  auto l = OK(s.GetLoops(C));
  auto expect_error = [](const auto& r, const std::string& text) {
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find(text), std::string::npos) << r.error().message;
  };
  expect_error(s.GetStage("nope"), "no stage named 'nope'");
  expect_error(s.Split(l[0], {int64_t{2}, int64_t{3}}), "cover 6 of the 24");
  expect_error(s.Split(l[0], {std::monostate{}, std::monostate{}}), "at most one factor");
  expect_error(s.Split(l[0], {int64_t{0}, int64_t{3}}), "must be positive");
  // Factors whose product wraps around 64 bits back to the extent (24 * 2^60 + 24 == 24 mod 2^64).
  expect_error(s.Split(l[0], {int64_t{24}, (int64_t{1} << 60) + 1, int64_t{1}}), "exceeds the 24 iterations");
  expect_error(s.Split(l[0], {std::monostate{}, int64_t{1} << 62, int64_t{1} << 62}), "exceeds the 24 iterations");
  expect_error(s.Fuse({l[1], l[2]}), "cannot fuse a reduction loop");
  expect_error(s.Fuse({l[0], l[2]}), "must be adjacent");
  expect_error(s.Vectorize(l[2]), "reduction loop and cannot be vectorized");
  expect_error(s.Bind(l[2], ThreadTag::kThreadIdxX), "cannot be bound to a thread");
  expect_error(s.ComputeInline(C), "is a reduction");
  expect_error(s.ReIndex(C, "nope"), "no stage or kernel input named 'nope'");
  expect_error(s.ReIndex(OK(s.GetStage("C_bias")), "A"), "does not read A");
  auto E = OK(s.GetStage("C_bias"));
  expect_error(s.ComputeAt(E, l[0]), "is the output");
  expect_error(s.ReverseComputeInline(E), "cache_write C first");
  expect_error(s.SamplePerfectTile(l[0], 2, 0, std::vector<int64_t>{5, 5}), "multiply to 25");
  expect_error(s.SampleCategorical({1, 2}, {0.5, 0.5}, 7), "not a candidate index");
  auto parts = OK(s.Split(l[0], {int64_t{4}, int64_t{6}}));
  expect_error(s.Reorder({l[0], l[1]}), "no longer exists");
  expect_error(s.CacheWrite(C, Scope::kLocal), "must come before its loops are transformed");
  OKV(s.Bind(parts[0], ThreadTag::kThreadIdxX));
  expect_error(s.Bind(parts[1], ThreadTag::kThreadIdxX), "already binds");
  // The failed steps are not in the trace, and what is there still lowers.
  auto f = Lower(s.state());
  EXPECT_TRUE(f) << f.error().message;
  for (const auto& inst : s.trace().instructions()) EXPECT_NE(inst.kind, "fuse");
}

TEST(SchedulePrimitives, BadTracesAreErrors) {
  Workload w = Make("gemm", kGemm);
  auto replay = [&](const std::string& text) {
    auto t = Trace::FromJsonText(text);
    if (!t) return t.error().message;
    auto s = Schedule::Replay(w, TargetKind::kCpu, *t);
    return s ? std::string("ok") : s.error().message;
  };
  EXPECT_NE(replay(R"({"instructions": [)").find("not valid JSON"), std::string::npos);  // no throw
  EXPECT_NE(replay("").find("not valid JSON"), std::string::npos);
  EXPECT_NE(replay(R"({"instructions": 3})").find("\"instructions\" array"), std::string::npos);
  EXPECT_NE(replay(R"({"instructions": [{"kind": "teleport"}]})").find("unknown kind 'teleport'"), std::string::npos);
  EXPECT_NE(replay(R"({"instructions": [{"kind": "get_loops", "inputs": ["s9"], "outputs": []}]})")
                .find("undefined stage symbol 's9'"),
            std::string::npos);
  EXPECT_NE(replay(R"({"format_version": 99, "instructions": []})").find("not supported"), std::string::npos);
  const char* bad_decision = R"({"instructions": [
    {"kind": "get_stage", "attrs": {"name": "C"}, "outputs": ["s0"]},
    {"kind": "get_loops", "inputs": ["s0"], "outputs": ["l0", "l1", "l2"]},
    {"kind": "sample_perfect_tile", "inputs": ["l0"], "attrs": {"n": 2, "max_innermost": 0},
     "outputs": ["v0", "v1"], "decision": [5, 5]}]})";
  EXPECT_NE(replay(bad_decision).find("multiply to 25"), std::string::npos);
  // Found by the trace fuzzer: floats where integers belong were cast, beyond int64's range too.
  const char* float_decision = R"({"instructions": [
    {"kind": "get_stage", "attrs": {"name": "C"}, "outputs": ["s0"]},
    {"kind": "get_loops", "inputs": ["s0"], "outputs": ["l0", "l1", "l2"]},
    {"kind": "sample_perfect_tile", "inputs": ["l0"], "attrs": {"n": 2, "max_innermost": 0},
     "outputs": ["v0", "v1"], "decision": [1, 6.7e52]}]})";
  EXPECT_NE(replay(float_decision).find("decision must be a list of integers"), std::string::npos);
  const char* float_attr = R"({"instructions": [
    {"kind": "get_stage", "attrs": {"name": "C"}, "outputs": ["s0"]},
    {"kind": "get_loops", "inputs": ["s0"], "outputs": ["l0", "l1", "l2"]},
    {"kind": "sample_perfect_tile", "inputs": ["l0"], "attrs": {"n": 1e30, "max_innermost": 0},
     "outputs": ["v0", "v1"]}]})";
  EXPECT_NE(replay(float_attr).find("attribute 'n' has the wrong type or is out of range"), std::string::npos);
}

TEST(SchedulePrimitives, MutatedDecisionReplaysToADifferentSchedule) {
  Workload w = Make("gemm", kGemm);
  Schedule s(w, TargetKind::kCpu, 3);
  auto C = OK(s.GetStage("C"));
  auto l = OK(s.GetLoops(C));
  auto t = OK(s.SamplePerfectTile(l[0], 2, 0, std::vector<int64_t>{4, 6}));
  OK(s.Split(l[0], {t[0], t[1]}));
  const size_t sample = s.trace().SamplingInstructions().at(0);
  auto mutated = s.trace().WithDecision(sample, nlohmann::json::array({8, 3}));
  auto r = Schedule::Replay(w, TargetKind::kCpu, mutated);
  ASSERT_TRUE(r) << r.error().message;
  const Stage& st = r->state().stages[r->state().FindStage("C")];
  EXPECT_EQ(st.iters[st.leaves[0]].extent, 8);
  EXPECT_EQ(st.iters[st.leaves[1]].extent, 3);
}

TEST(SchedulePrimitives, SamplingIsDeterministicForASeed) {
  Workload w = Make("gemm", "M=64,N=64,K=64");
  auto sample = [&](uint64_t seed) {
    Schedule s(w, TargetKind::kCpu, seed);
    auto C = OK(s.GetStage("C"));
    auto l = OK(s.GetLoops(C));
    OK(s.SamplePerfectTile(l[0], 4, 8));
    OK(s.SampleCategorical({0, 1, 2, 3}, {0.25, 0.25, 0.25, 0.25}));
    return s.trace().ToJson();
  };
  EXPECT_EQ(sample(11), sample(11));
  bool differs = false;
  for (uint64_t seed = 12; seed < 20; ++seed) differs |= sample(seed) != sample(11);
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace autotune::tir
