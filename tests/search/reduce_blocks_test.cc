// cpu.registers with its accumulator spanning the parallel tile and the longest reduction axis in
// blocks around the outer tile (SketchDecisions::reduce_block): every such schedule computes the
// operator (C path, against the reference), and the choice is offered only where the outer tile
// repeats.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "measure/c_builder.h"
#include "measure/cpu_runner.h"
#include "search/sketch.h"
#include "tests/measure/test_kernels.h"
#include "tests/temp_path.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"

namespace autotune::search {
namespace {

struct Drawn {
  Result<tir::Schedule> schedule;
  std::vector<int64_t> offered;  // the block sizes offered (0: none), empty where it was not asked
};

// A cpu.registers schedule, its tiles drawn with `seed`, the largest block offered taken (or none).
Drawn BlockedSchedule(const tir::Workload& w, uint64_t seed, bool channel_vectors, bool block) {
  tir::Schedule sch(w, tir::TargetKind::kCpu, seed);
  std::vector<int64_t> offered;
  SketchDecisions d;
  d.channel_vectors = [channel_vectors](const std::vector<int64_t>&) -> std::optional<int64_t> {
    return channel_vectors ? 1 : 0;
  };
  d.reduce_block = [&offered, block](const std::vector<int64_t>& c) -> std::optional<int64_t> {
    offered = c;
    return block ? static_cast<int64_t>(c.size()) - 1 : 0;
  };
  if (auto r = ApplySketch(sch, *FindSketch("cpu.registers"), d); !r) return {r.error(), offered};
  return {std::move(sch), offered};
}

TEST(ReduceBlocks, BlockedSchedulesComputeTheReference) {
  const std::string cache = testing::TestTempPath("reduce_blocks", "cache");
  const measure::MeasureConfig config = test_kernels::QuickCpuConfig(cache, 2);
  struct Case {
    std::string op, shape, epilogue;
    bool channel_vectors;
  };
  for (const Case& c : {Case{"gemm", "M=24,N=48,K=96", "bias,relu", false},
                        Case{"batch_matmul", "B=2,M=12,N=32,K=40", "", false},
                        Case{"conv2d", "N=1,C=32,H=7,W=7,K=32,R=3,S=3,pad=1", "bias", true},
                        Case{"conv2d_nhwc", "N=1,C=16,H=6,W=5,K=32,R=3,S=3,pad=1", "", false},
                        Case{"conv1d", "N=1,C=24,L=13,K=16,R=3,pad=1", "", true}}) {
    auto w = tir::MakeWorkload(c.op, c.shape, c.epilogue);
    ASSERT_TRUE(w) << w.error().message;
    int blocked = 0;
    for (uint64_t seed = 1; seed <= 12 && blocked < 3; ++seed) {
      SCOPED_TRACE(c.op + " " + c.shape + " seed " + std::to_string(seed));
      Drawn drawn = BlockedSchedule(*w, seed, c.channel_vectors, true);
      ASSERT_TRUE(drawn.schedule) << drawn.schedule.error().message;
      if (drawn.offered.size() < 2) continue;
      ++blocked;
      auto f = tir::Lower(drawn.schedule->state());
      ASSERT_TRUE(f) << f.error().message;
      auto built = measure::CBuilder(config).Build({measure::BuildInput::FromFunc(*f)});
      ASSERT_TRUE(built[0].ok()) << built[0].error_message;
      auto res = measure::CpuRunner(config).Run(*w, built);
      EXPECT_TRUE(res[0].ok() && res[0].correct) << res[0].error_message << "\n" << built[0].source;
    }
    EXPECT_GT(blocked, 0) << c.op << " " << c.shape << ": no draw offered a reduction block";
  }
}

// The blocks offered divide the longest reduction axis; none is offered where the reduction is no
// longer than the smallest block.
TEST(ReduceBlocks, OfferedWhereTheOuterTileRepeats) {
  auto w = tir::MakeWorkload("gemm", "M=8,N=16,K=96");
  ASSERT_TRUE(w);
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    Drawn drawn = BlockedSchedule(*w, seed, false, false);
    ASSERT_TRUE(drawn.schedule) << drawn.schedule.error().message;
    for (int64_t b : drawn.offered) EXPECT_TRUE(b == 0 || (96 % b == 0 && b < 96)) << b;
  }
  auto short_k = tir::MakeWorkload("gemm", "M=64,N=64,K=8");
  ASSERT_TRUE(short_k);
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    EXPECT_TRUE(BlockedSchedule(*short_k, seed, false, true).offered.empty()) << "K=8, seed " << seed;
  }
}

}  // namespace
}  // namespace autotune::search
