// The caching primitives (cache_read, cache_write, storage_align, reorder_storage, double_buffer, pipeline,
// reindex, pack_input): each is recorded in the trace, the trace replays to the same lowered IR, and misuse is an
// error value.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tir/lowering_test_util.h"
#include "tests/tir/schedule_test_util.h"
#include "tir/lower/lower.h"
#include "tir/printer.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

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

// Whether lowering pipelines the loop that refills shared copies of A (marked double_buffer) and B
// (marked only with `mark_b`).
bool RefillOfAAndBIsPipelined(bool mark_b) {
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
  return f && ToString(f->body).find("barrier(async_wait=0)") != std::string::npos;
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

// A gemm's output in 4x4 tiles, each accumulated in a local buffer laid out column by column.
void TileWithColumnMajorAccumulator(Schedule& s) {
  auto C = OK(s.GetStage("C"));
  auto local = OK(s.CacheWrite(C, Scope::kLocal));
  auto l = OK(s.GetLoops(C));
  auto i = OK(s.Split(l[0], {std::monostate{}, int64_t{4}}));
  auto j = OK(s.Split(l[1], {std::monostate{}, int64_t{4}}));
  OKV(s.Reorder({i[0], j[0], i[1], j[1]}));
  OKV(s.ComputeAt(local, j[0]));
  OKV(s.ReorderStorage(local, {1, 0}));
}

TEST(SchedulePrimitives, ReorderStorageLaysOutTheBufferInTheGivenOrder) {
  CheckRoundTrip("gemm", kGemm, "", TargetKind::kCpu, TileWithColumnMajorAccumulator, "reorder_storage");
  Workload w = Make("gemm", "M=8,N=8,K=8");  // what RunGemm computes
  Schedule s(w, TargetKind::kCpu);
  TileWithColumnMajorAccumulator(s);
  auto f = Lower(s.state());
  ASSERT_TRUE(f) << f.error().message;
  ExpectNear(RunGemm(*f), ReferenceGemm());
  // Element (i, j) of the 4x4 tile is at j * 4 + i: the rows' index is the one with stride 1.
  const std::string text = ToString(f->body);
  EXPECT_NE(text.find("= C_local[(i_1 + (j_1 * 4))]"), std::string::npos) << text;
}

TEST(SchedulePrimitives, ReorderStorageNeedsAnOrderOfAnIntermediateBuffersDimensions) {
  Workload w = Make("gemm", kGemm);
  Schedule s(w, TargetKind::kCpu);
  auto C = OK(s.GetStage("C"));
  auto local = OK(s.CacheWrite(C, Scope::kLocal));
  EXPECT_FALSE(s.ReorderStorage(local, {0, 0}));
  EXPECT_FALSE(s.ReorderStorage(local, {1}));
  EXPECT_FALSE(s.ReorderStorage(local, {2, 0}));
  EXPECT_FALSE(s.ReorderStorage(C, {1, 0})) << "the output's layout is the caller's";
  OKV(s.StorageAlign(local, 0, 8, 1));
  EXPECT_FALSE(s.ReorderStorage(local, {1, 0})) << "not with storage_align";
}

// A gemm's B packed by 8 of its N columns (N=20: the last block half zeros), its columns split by 4.
void PackB(Schedule& s) {
  auto C = OK(s.GetStage("C"));
  auto l = OK(s.GetLoops(C));
  auto tile = OK(s.SamplePerfectTile(l[1], 2, 4, std::vector<int64_t>{5, 4}));
  OKV(s.Split(l[1], {tile[0], tile[1]}));
  OKV(s.PackInput("B", 1, {int64_t{8}}));
}

TEST(SchedulePrimitives, PackInputMakesTheKernelReadThePackedTensor) {
  CheckRoundTrip("gemm", kGemm, "", TargetKind::kCpu, PackB, "pack_input");
  Workload w = Make("gemm", kGemm);
  Schedule s(w, TargetKind::kCpu);
  PackB(s);
  auto f = Lower(s.state());
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_EQ(f->packs.size(), 1u);
  EXPECT_EQ(f->packs[0].param, 1);
  EXPECT_EQ(f->packs[0].source->name, "B");
  EXPECT_EQ(f->params[1]->name, "B_packed");
  EXPECT_EQ(PackedElements(f->packs[0]), 12 * 3 * 8) << "K x ceil(20 / 8) x 8";
  const std::string text = ToString(f->body);
  EXPECT_EQ(text.find("B["), std::string::npos) << text;
  EXPECT_NE(text.find("B_packed["), std::string::npos) << text;
}

TEST(SchedulePrimitives, PackInputNeedsAnInputADimensionAndAFactorWithin) {
  Workload w = Make("gemm", kGemm);
  Schedule s(w, TargetKind::kCpu);
  EXPECT_FALSE(s.PackInput("C", 0, {int64_t{4}})) << "not an input";
  EXPECT_FALSE(s.PackInput("B", 2, {int64_t{4}})) << "B has 2 dimensions";
  EXPECT_FALSE(s.PackInput("B", 1, {int64_t{21}})) << "N is 20";
  EXPECT_FALSE(s.PackInput("B", 1, {int64_t{0}}));
  OKV(s.PackInput("B", 1, {int64_t{4}, int64_t{5}}));
  EXPECT_FALSE(s.PackInput("B", 0, {int64_t{4}})) << "packed already";
  Schedule gpu(w, TargetKind::kCuda);
  auto e = gpu.PackInput("A", 0, {int64_t{4}});
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("cpu"), std::string::npos) << e.error().message;
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
  }, "double_buffer");

  // Refilled together with an unmarked copy of B: the mark is a request, and that loop stays as it
  // is; with B marked too, it is pipelined.
  EXPECT_FALSE(RefillOfAAndBIsPipelined(/*mark_b=*/false));
  EXPECT_TRUE(RefillOfAAndBIsPipelined(/*mark_b=*/true));

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

// A copy pipelined over S stages: the trace replays it; lowering gives it S slots, fills S - 1 tiles
// ahead (the prologue closes a group per tile but the last) and waits for all but S - 2 groups.
TEST(SchedulePrimitives, PipelineOfASharedCopy) {
  for (int64_t stages : {3, 4}) {
    std::string text;
    CheckRoundTrip("gemm", kGemm, "", TargetKind::kCuda, [&](Schedule& s) {
      auto [local, As, ll] = TileWithSharedA(s);
      auto k = OK(s.Split(ll[2], {std::monostate{}, int64_t{2}}));
      OKV(s.Reorder({k[0], ll[0], ll[1], k[1]}));
      OKV(s.ComputeAt(As, k[0]));
      auto n = OK(s.SampleCategorical({2, 3, 4}, {0.3, 0.3, 0.4}, stages - 2));
      OKV(s.Pipeline(As, n));
      auto f = Lower(s.state());
      ASSERT_TRUE(f) << f.error().message;
      text = ToString(f->body);
    }, "pipeline");
    auto count = [&](const std::string& what) {
      size_t c = 0;
      for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++c;
      return c;
    };
    // A's tile of 4 rows by 2 columns, once per slot.
    EXPECT_EQ(count(fmt::format("float32[{}]", 8 * stages)), 1u) << text;
    EXPECT_EQ(count("barrier(async_wait=" + std::to_string(stages - 2) + ")"), 2u) << text;  // prologue and loop
    EXPECT_EQ(count("barrier(async_wait="), static_cast<size_t>(stages - 1)) << text;
  }
  Workload w = Make("gemm", kGemm);
  Schedule s(w, TargetKind::kCuda);
  auto As = OK(s.CacheReadInput("B", Scope::kShared, {OK(s.GetStage("C"))}));
  for (int64_t bad : {0, 5}) {
    auto r = s.Pipeline(As, bad);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("1 (off) to 4 stages"), std::string::npos) << r.error().message;
  }
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

}  // namespace
}  // namespace autotune::tir
