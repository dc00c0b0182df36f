// Illegal schedule steps and bad traces are error values: nothing throws, failed steps stay out of
// the trace, and the state stays usable.
#include <gtest/gtest.h>

#include <string>

#include "tests/tir/schedule_test_util.h"
#include "tir/lower/lower.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

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
  expect_error(s.Parallel(l[2]), "reduction loop and cannot be parallel");
  expect_error(s.Bind(l[2], ThreadTag::kBlockIdxX), "cannot be bound to a block or virtual thread");
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
  // Found by the trace fuzzer: tile sizes whose product overflows int64 (undefined behaviour).
  const char* huge_decision = R"({"instructions": [
    {"kind": "get_stage", "attrs": {"name": "C"}, "outputs": ["s0"]},
    {"kind": "get_loops", "inputs": ["s0"], "outputs": ["l0", "l1", "l2"]},
    {"kind": "sample_perfect_tile", "inputs": ["l0"], "attrs": {"n": 2, "max_innermost": 0},
     "outputs": ["v0", "v1"], "decision": [4611686018427387904, 4]}]})";
  EXPECT_NE(replay(huge_decision).find("multiply to more than 2^63"), std::string::npos) << replay(huge_decision);
  const char* float_attr = R"({"instructions": [
    {"kind": "get_stage", "attrs": {"name": "C"}, "outputs": ["s0"]},
    {"kind": "get_loops", "inputs": ["s0"], "outputs": ["l0", "l1", "l2"]},
    {"kind": "sample_perfect_tile", "inputs": ["l0"], "attrs": {"n": 1e30, "max_innermost": 0},
     "outputs": ["v0", "v1"]}]})";
  EXPECT_NE(replay(float_attr).find("attribute 'n' has the wrong type or is out of range"), std::string::npos);
}

}  // namespace
}  // namespace autotune::tir
