// cpu.registers with its vectors along a convolution's output channels: the weights copied channels
// last or packed once (and the padded input copied), the accumulator laid out channels last; every
// such schedule computes the convolution (C path, against the reference), and a grouped convolution
// or a gemm is never given the choice.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>

#include "measure/c_builder.h"
#include "measure/cpu_runner.h"
#include "search/default_schedule.h"
#include "search/sketch.h"
#include "tests/measure/test_kernels.h"
#include "tests/temp_path.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"

namespace autotune::search {
namespace {

// A cpu.registers schedule of the workload with channel vectors (and the operands' form: 0 as they
// are, 1 copied per parallel tile, 2 made once: the weights packed and the input copied before the
// tiles), its tiles drawn with `seed`.
Result<tir::Schedule> ChannelSchedule(const tir::Workload& w, int64_t copy, uint64_t seed) {
  tir::Schedule sch(w, tir::TargetKind::kCpu, seed);
  SketchDecisions d;
  d.channel_vectors = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 1; };
  d.copy_operand = [copy](const std::vector<int64_t>&) -> std::optional<int64_t> { return copy; };
  d.copy_input = [copy](const std::vector<int64_t>&) -> std::optional<int64_t> { return copy; };
  if (auto r = ApplySketch(sch, *FindSketch("cpu.registers"), d); !r) return r.error();
  return sch;
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ChannelVectors, ConvolutionsComputeTheReferenceWithWeightsAndAccumulatorChannelsLast) {
  const std::string cache = testing::TestTempPath("channel_vectors", "cache");
  const measure::MeasureConfig config = test_kernels::QuickCpuConfig(cache, 2);
  for (const auto& [op, shape] : {std::pair<std::string, std::string>{"conv2d", "N=1,C=5,H=9,W=7,K=32,R=3,S=3,pad=1"},
                                  {"conv2d", "N=2,C=3,H=8,W=8,K=48,R=3,S=2,stride=2,pad=1,dilation=2"},
                                  {"conv1d", "N=1,C=4,L=13,K=16,R=3,pad=1"},
                                  {"conv3d", "N=1,C=2,D=4,H=5,W=5,K=16,Q=2,R=3,S=3,pad=1"}}) {
    auto w = tir::MakeWorkload(op, shape, "bias,relu");
    ASSERT_TRUE(w) << w.error().message;
    for (int64_t copy : {0, 1, 2}) {
      for (uint64_t seed : {1, 2, 3}) {
        SCOPED_TRACE(op + " " + shape + " copy " + std::to_string(copy) + " seed " + std::to_string(seed));
        auto sch = ChannelSchedule(*w, copy, seed);
        ASSERT_TRUE(sch) << sch.error().message;
        const std::string trace = sch->trace().ToJson().dump();
        EXPECT_NE(trace.find("reorder_storage"), std::string::npos) << "the accumulator channels last";
        const size_t copies = copy == 0 ? 0 : copy == 1 ? 2 : 1;
        EXPECT_EQ(Occurrences(trace, "\"cache_read\""), copies) << "the weights' and the input's copies";
        EXPECT_EQ(Occurrences(trace, "pack_input"), copy == 2 ? 1u : 0u);
        auto f = tir::Lower(sch->state());
        ASSERT_TRUE(f) << f.error().message;
        auto built = measure::CBuilder(config).Build({measure::BuildInput::FromFunc(*f)});
        ASSERT_TRUE(built[0].ok()) << built[0].error_message;
        auto res = measure::CpuRunner(config).Run(*w, built);
        EXPECT_TRUE(res[0].ok() && res[0].correct) << res[0].error_message << "\n" << built[0].source;
      }
    }
  }
}

// The cpu default of a convolution: channel vectors, the weights packed and the padded input copied.
TEST(ChannelVectors, AreTheDefaultOfConvolutions) {
  for (const auto& [op, shape, channels] :
       {std::tuple<std::string, std::string, bool>{"conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", true},
        {"conv1d", "N=1,C=4,L=13,K=16,R=3,pad=1", true},
        {"gemm", "M=64,N=64,K=64", false},
        {"conv2d", "N=1,C=8,H=6,W=6,K=16,R=3,S=3,pad=1,groups=2", false}}) {
    auto w = tir::MakeWorkload(op, shape);
    ASSERT_TRUE(w);
    auto sch = DefaultSchedule(*w, tir::TargetKind::kCpu);
    ASSERT_TRUE(sch) << sch.error().message;
    const std::string trace = sch->trace().ToJson().dump();
    EXPECT_EQ(Occurrences(trace, "reorder_storage") > 0, channels) << op << " " << shape;
    if (channels) {
      EXPECT_EQ(Occurrences(trace, "\"cache_read\""), 1u) << op << " " << shape;
    }
    EXPECT_EQ(Occurrences(trace, "pack_input"), channels ? 1u : 0u) << op << " " << shape;
  }
}

// Where the default's parallel tiles split only the channels (a 512-channel 7x7 layer: 16 tiles of 32
// channels), the padded input is copied once, before them, not once per tile; where they split the
// rows too, per tile.
TEST(ChannelVectors, TheDefaultCopiesTheInputOnceWhereTheTilesSplitNoRows) {
  for (const auto& [shape, once] : {std::pair<std::string, bool>{"N=1,C=512,H=7,W=7,K=512,R=3,S=3,pad=1", true},
                                    {"N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", false}}) {
    auto w = tir::MakeWorkload("conv2d", shape);
    ASSERT_TRUE(w);
    auto sch = DefaultSchedule(*w, tir::TargetKind::kCpu);
    ASSERT_TRUE(sch) << sch.error().message;
    const std::string trace = sch->trace().ToJson().dump();
    EXPECT_EQ(Occurrences(trace, "\"compute_at\""), once ? 1u : 2u) << shape << ": the accumulator, and the copy per tile";
    EXPECT_EQ(Occurrences(trace, "\"parallel\""), once ? 2u : 1u) << shape << ": the tiles, and the copy once";
  }
}

TEST(ChannelVectors, GemmsAndGroupedConvolutionsAreNotOffered) {
  for (const auto& [op, shape] : {std::pair<std::string, std::string>{"gemm", "M=16,N=32,K=8"},
                                  {"conv2d", "N=1,C=8,H=6,W=6,K=16,R=3,S=3,pad=1,groups=2"}}) {
    auto w = tir::MakeWorkload(op, shape);
    ASSERT_TRUE(w);
    auto sch = ChannelSchedule(*w, 1, 1);
    ASSERT_TRUE(sch) << sch.error().message;
    EXPECT_EQ(sch->trace().ToJson().dump().find("reorder_storage"), std::string::npos) << op << " " << shape;
  }
}

}  // namespace
}  // namespace autotune::search
