// Sketches and schedule rules: the table names only registered rules, which sketches are offered for
// which workloads, errors of a bad sketch, and the hand-picked split-K schedule.
#include "search/sketch.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <set>
#include <tuple>
#include <string>

#include "search/default_schedule.h"
#include "search/rules/schedule_rule.h"
#include "tir/analysis/gpu_validity.h"
#include "tir/codegen/codegen_cuda.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"

namespace autotune::search {
namespace {

using tir::TargetKind;

const char* kLateConv = "N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1";

tir::Workload Make(const std::string& op, const std::string& shape, const std::string& dtype = "float32") {
  auto w = tir::MakeWorkload(op, shape, "", dtype);
  EXPECT_TRUE(w) << w.error().message;
  return *w;
}

std::vector<std::string> Offered(const tir::Workload& w, TargetKind target) {
  std::vector<std::string> names;
  for (const SketchSpec* s : ApplicableSketches(tir::Schedule(w, target))) names.push_back(s->name);
  return names;
}

bool HasInstruction(const tir::Schedule& sch, const std::string& kind) {
  const nlohmann::json trace = sch.trace().ToJson();
  for (const auto& inst : trace.at("instructions")) {
    if (inst.at("kind") == kind) return true;
  }
  return false;
}

TEST(Sketches, TableNamesOnlyRegisteredRules) {
  std::set<std::string> names;
  for (const auto& s : BuiltinSketches()) {
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate sketch " << s.name;
    EXPECT_FALSE(s.rules.empty()) << s.name;
    for (const auto& r : s.rules) EXPECT_NE(FindScheduleRule(r), nullptr) << s.name << " names unknown rule " << r;
  }
  for (TargetKind t : {TargetKind::kCpu, TargetKind::kCuda}) {
    bool any = false;
    for (const auto& s : BuiltinSketches()) any = any || s.target == t;
    EXPECT_TRUE(any) << tir::TargetKindName(t);
  }
  EXPECT_EQ(FindScheduleRule("no_such_rule"), nullptr);
  EXPECT_EQ(ScheduleRuleNames().size(), 19u);
}

// cpu.matrix: a convolution whose pixels are contiguous columns of its input (1x1, stride 1, one
// image; a padded input's pixels too) is offered the gemm's tiling, first (its default); a window, a
// stride or a second image read columns apart, and a gemm needs no rewriting.
TEST(Sketches, PointwiseConvolutionsAreTiledAsGemmsOnTheCpu) {
  const tir::Workload pointwise = Make("conv2d", "N=1,C=256,H=56,W=56,K=64,R=1,S=1");
  EXPECT_EQ(Offered(pointwise, TargetKind::kCpu), (std::vector<std::string>{"cpu.matrix", "cpu.registers", "cpu.tiled"}));
  EXPECT_EQ(DefaultSketch(tir::Schedule(pointwise, TargetKind::kCpu)), FindSketch("cpu.matrix"));
  EXPECT_EQ(Offered(Make("conv1d", "N=1,C=16,L=40,K=8,R=1"), TargetKind::kCpu).front(), "cpu.matrix");
  EXPECT_EQ(Offered(Make("conv2d", "N=1,C=64,H=14,W=14,K=64,R=1,S=1,pad=1"), TargetKind::kCpu).front(), "cpu.matrix");
  for (const char* shape : {"N=1,C=64,H=14,W=14,K=64,R=3,S=3,pad=1", "N=1,C=64,H=14,W=14,K=64,R=1,S=1,stride=2",
                            "N=2,C=64,H=14,W=14,K=64,R=1,S=1"}) {
    EXPECT_EQ(Offered(Make("conv2d", shape), TargetKind::kCpu).front(), "cpu.registers") << shape;
  }
  EXPECT_EQ(Offered(Make("gemm", "M=64,N=64,K=64"), TargetKind::kCpu).front(), "cpu.registers");
}

// Row operators get the row sketches and nothing else; contractions never get them.
TEST(Sketches, RowOperatorsHaveTheirOwnSketches) {
  for (const auto& [op, shape] : std::vector<std::pair<std::string, std::string>>{
           {"softmax", "M=8,N=100"}, {"layer_norm", "M=4,N=768"}, {"rms_norm", "M=2,N=64"}, {"norm", "B=2,M=8,N=8"},
           {"add_rms_norm", "M=2,N=8192"}, {"add_layer_norm", "M=4,N=768"}}) {
    EXPECT_EQ(Offered(Make(op, shape), TargetKind::kCuda), (std::vector<std::string>{"cuda.rows"})) << op;
    EXPECT_EQ(Offered(Make(op, shape), TargetKind::kCpu), (std::vector<std::string>{"cpu.rows"})) << op;
  }
  // A few long rows with one sum: split over blocks too, and that is the default.
  EXPECT_EQ(Offered(Make("norm", "B=1,M=1024,N=1024"), TargetKind::kCuda),
            (std::vector<std::string>{"cuda.rows_split", "cuda.rows"}));
  EXPECT_EQ(DefaultSketch(tir::Schedule(Make("norm", "B=1,M=1024,N=1024"), TargetKind::kCuda)),
            FindSketch("cuda.rows_split"));
  EXPECT_EQ(Offered(Make("softmax", "M=1,N=100000"), TargetKind::kCuda), (std::vector<std::string>{"cuda.rows"}));
  EXPECT_EQ(Offered(Make("gemm", "M=64,N=64,K=64"), TargetKind::kCpu),
            (std::vector<std::string>{"cpu.registers", "cpu.tiled"}));
}

TEST(Sketches, DirectIsOfferedForReductionsOfAtMostAWindow) {
  // Depthwise 3x3 and 7x7 (9 and 49 elements per output), a grouped 3x3 of 4 channels a group (36).
  EXPECT_EQ(Offered(Make("conv2d", "N=1,C=384,H=14,W=14,K=384,R=3,S=3,pad=1,groups=384"), TargetKind::kCuda),
            (std::vector<std::string>{"cuda.tiled", "cuda.direct"}));
  EXPECT_EQ(Offered(Make("conv2d", "N=1,C=96,H=56,W=56,K=96,R=7,S=7,pad=3,groups=96"), TargetKind::kCuda),
            (std::vector<std::string>{"cuda.tiled", "cuda.direct"}));
  EXPECT_EQ(Offered(Make("conv2d", "N=1,C=64,H=28,W=28,K=64,R=3,S=3,pad=1,groups=16"), TargetKind::kCuda),
            (std::vector<std::string>{"cuda.tiled", "cuda.direct"}));
  // Longer reductions: a shared copy feeds many outputs from one load.
  EXPECT_EQ(Offered(Make("conv2d", "N=1,C=64,H=28,W=28,K=64,R=3,S=3,pad=1,groups=8"), TargetKind::kCuda),
            (std::vector<std::string>{"cuda.tiled"}));
  EXPECT_EQ(Offered(Make("batch_matmul", "B=12,M=128,N=128,K=64"), TargetKind::kCuda),
            (std::vector<std::string>{"cuda.tiled"}));
  EXPECT_EQ(Offered(Make("conv2d", "N=1,C=32,H=112,W=112,K=32,R=3,S=3,pad=1,groups=32"), TargetKind::kCpu),
            (std::vector<std::string>{"cpu.registers", "cpu.tiled"}));
}

// Its schedules read no input through shared memory, and its hand-picked one fits the GPU.
TEST(Sketches, DirectSchedulesHaveNoSharedMemory) {
  tir::Workload w = Make("conv2d", "N=1,C=384,H=14,W=14,K=384,R=3,S=3,pad=1,groups=384");
  const SketchSpec* direct = FindSketch("cuda.direct");
  ASSERT_NE(direct, nullptr);
  tir::Schedule hand_picked(w, TargetKind::kCuda);
  ASSERT_TRUE(ApplySketch(hand_picked, *direct, DefaultDecisions(tir::Schedule(w, TargetKind::kCuda), *direct)));
  auto f = tir::Lower(hand_picked.state());
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_TRUE(tir::CheckGpuValidity(*f).ok());
  int lowered = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto sch = RandomScheduleOfSketch(w, *direct, seed);
    if (!sch) continue;
    EXPECT_FALSE(HasInstruction(*sch, "cache_read")) << seed;
    auto lf = tir::Lower(sch->state());
    if (!lf) continue;
    auto m = tir::CodegenCuda(*lf);
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(m->code.find("__shared__"), std::string::npos) << m->code;
    EXPECT_EQ(m->code.find("__syncthreads"), std::string::npos) << m->code;
    ++lowered;
  }
  EXPECT_GT(lowered, 10);
}

TEST(Sketches, SplitKIsOfferedForSmallOutputsWithLongReductionsOnly) {
  EXPECT_EQ(Offered(Make("conv2d", kLateConv), TargetKind::kCuda),
            (std::vector<std::string>{"cuda.tiled", "cuda.split_k"}));
  EXPECT_EQ(Offered(Make("gemm", "M=4,N=64,K=4096"), TargetKind::kCuda),
            (std::vector<std::string>{"cuda.tiled", "cuda.split_k"}));
  EXPECT_EQ(Offered(Make("gemm", "M=512,N=768,K=768"), TargetKind::kCuda),
            (std::vector<std::string>{"cuda.tiled", "cuda.split_k"}));
  // Many outputs: enough parallel work without partial sums.
  EXPECT_EQ(Offered(Make("gemm", "M=1024,N=1024,K=1024"), TargetKind::kCuda),
            (std::vector<std::string>{"cuda.tiled", "cuda.split_k"}));
  EXPECT_EQ(Offered(Make("gemm", "M=2048,N=1024,K=1024"), TargetKind::kCuda),
            (std::vector<std::string>{"cuda.tiled"}));
  // A short reduction: nothing to split.
  EXPECT_EQ(Offered(Make("gemm", "M=8,N=8,K=64"), TargetKind::kCuda), (std::vector<std::string>{"cuda.tiled"}));
  // A prime reduction extent has no part count.
  EXPECT_EQ(Offered(Make("gemm", "M=8,N=8,K=521"), TargetKind::kCuda), (std::vector<std::string>{"cuda.tiled"}));
  EXPECT_EQ(Offered(Make("conv2d", kLateConv), TargetKind::kCpu),
            (std::vector<std::string>{"cpu.registers", "cpu.tiled"}));
}

// im2col only when named, and only where the reduction reads through a window: not for gemms, 1x1
// convolutions (already a gemm's layout) or depthwise ones (every output iterator in the read: no tile
// shares a copy).
TEST(Sketches, Im2colIsOfferedWhenNamedForWindowedConvolutionsOnly) {
  auto has_im2col = [](const tir::Workload& w) {
    return ApplicableSketches(tir::Schedule(w, TargetKind::kCuda), {"cuda.tiled", "cuda.im2col"}).size() == 2;
  };
  const auto by_default = Offered(Make("conv2d", kLateConv), TargetKind::kCuda);
  EXPECT_EQ(std::find(by_default.begin(), by_default.end(), "cuda.im2col"), by_default.end());
  EXPECT_TRUE(has_im2col(Make("conv2d", "N=16,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1")));
  EXPECT_TRUE(has_im2col(Make("conv2d", "N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3")));
  EXPECT_TRUE(has_im2col(Make("conv2d", "N=1,C=8,H=9,W=9,K=8,R=3,S=3")));  // no padding stage
  EXPECT_FALSE(has_im2col(Make("conv2d", "N=1,C=256,H=56,W=56,K=64,R=1,S=1")));
  EXPECT_FALSE(has_im2col(Make("conv2d", "N=1,C=32,H=112,W=112,K=32,R=3,S=3,pad=1,groups=32")));
  EXPECT_FALSE(has_im2col(Make("gemm", "M=512,N=768,K=768")));
  EXPECT_FALSE(has_im2col(Make("batch_matmul", "B=12,M=128,N=128,K=64")));
  EXPECT_EQ(Offered(Make("conv2d", kLateConv), TargetKind::kCpu),
            (std::vector<std::string>{"cpu.registers", "cpu.tiled"}));
}

TEST(Sketches, BadSketchesAreErrors) {
  tir::Workload w = Make("gemm", "M=64,N=64,K=64");
  tir::Schedule sch(w, TargetKind::kCuda);
  auto r = ApplySketch(sch, SketchSpec{"mine", TargetKind::kCuda, {"cache_write_local", "no_such_rule"}}, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "sketch mine: no schedule rule named no_such_rule");
  tir::Schedule cpu(w, TargetKind::kCpu);
  auto other = ApplySketch(cpu, *FindSketch("cuda.tiled"), {});
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("another target"), std::string::npos);
  // Rules that need an earlier one say so.
  tir::Schedule early(w, TargetKind::kCuda);
  auto order = ApplySketch(early, SketchSpec{"backwards", TargetKind::kCuda, {"auto_unroll"}}, {});
  ASSERT_FALSE(order);
  EXPECT_NE(order.error().message.find("needs multi-level tiling first"), std::string::npos) << order.error().message;
}

TEST(Sketches, DefaultSchedulesCoverEveryOfferedSketch) {
  tir::Workload conv = Make("conv2d", kLateConv);
  auto defaults =
      DefaultSchedules(conv, TargetKind::kCuda, {"cuda.tiled", "cuda.split_k", "cuda.im2col", "cuda.split_k_im2col"});
  ASSERT_EQ(defaults.size(), 4u);
  EXPECT_EQ(DefaultSchedules(conv, TargetKind::kCuda).size(), 2u);  // im2col only when named
  auto first = DefaultSchedule(conv, TargetKind::kCuda);
  ASSERT_TRUE(first);
  EXPECT_EQ(defaults[0].trace().ToJson(), first->trace().ToJson());
  EXPECT_FALSE(HasInstruction(defaults[0], "rfactor"));
  EXPECT_TRUE(HasInstruction(defaults[1], "rfactor"));
  EXPECT_TRUE(HasInstruction(defaults[2], "reindex"));
  EXPECT_TRUE(HasInstruction(defaults[3], "rfactor") && HasInstruction(defaults[3], "reindex"));
  auto f = tir::Lower(defaults[3].state());
  ASSERT_TRUE(f) << f.error().message;
  auto usage = tir::CheckGpuValidity(*f);
  ASSERT_TRUE(usage) << usage.error().message;
  EXPECT_EQ(usage->kernels, 2);  // the partial sums, then their sum
  EXPECT_EQ(DefaultSchedules(conv, TargetKind::kCpu).size(), 2u);  // cpu.registers and cpu.tiled
  EXPECT_EQ(DefaultSchedules(Make("gemm", "M=2048,N=1024,K=1024"), TargetKind::kCuda).size(), 1u);
}

// The cuda default fits the GPU also where the hand-picked tiles do not (the stem convolution's 7x7
// stride-2 input tile: too much shared memory); where they do, it is exactly the hand-picked
// schedule (the depthwise layer's, since its copies hold only the block's channel).
TEST(Sketches, TheCudaDefaultShrinksItsTilesUntilItFits) {
  const tir::GpuLimits sm90;
  auto fits = [&](const tir::Schedule& sch) {
    auto f = tir::Lower(sch.state());
    return f && tir::CheckGpuValidity(*f, sm90).ok();
  };
  auto hand_picked = [](const tir::Workload& w) {
    tir::Schedule sch(w, TargetKind::kCuda);
    EXPECT_TRUE(ApplySketch(sch, *FindSketch("cuda.tiled"), DefaultDecisions(TargetKind::kCuda)));
    return sch;
  };
  const tir::Workload stem = Make("conv2d", "N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3");
  EXPECT_FALSE(fits(hand_picked(stem)));
  auto stem_default = DefaultSchedule(stem, TargetKind::kCuda);
  ASSERT_TRUE(stem_default);
  EXPECT_TRUE(fits(*stem_default));
  for (const char* shape : {"N=1,C=32,H=112,W=112,K=32,R=3,S=3,stride=1,pad=1,groups=32", "M=1024,N=1024,K=1024"}) {
    const tir::Workload w = Make(shape[0] == 'M' ? "gemm" : "conv2d", shape);
    EXPECT_TRUE(fits(hand_picked(w))) << shape;
    auto def = DefaultSchedule(w, TargetKind::kCuda);
    ASSERT_TRUE(def) << shape;
    EXPECT_EQ(def->trace().ToJson(), hand_picked(w).trace().ToJson()) << shape;
  }
}

TEST(Sketches, HandPickedSplitKOfTheLateConvolution) {
  tir::Workload conv = Make("conv2d", kLateConv);
  auto defaults = DefaultSchedules(conv, TargetKind::kCuda);
  ASSERT_EQ(defaults.size(), 2u);
  auto f = tir::Lower(defaults[1].state());
  ASSERT_TRUE(f) << f.error().message;
  auto usage = tir::CheckGpuValidity(*f);
  ASSERT_TRUE(usage) << usage.error().message;
  EXPECT_EQ(usage->kernels, 2);
  auto m = tir::CodegenCuda(*f);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->kernels.size(), 2u);
  // 16 parts of 32 channels (16 x 25088 = 401408 partial sums); per block 16 output channels x 7 rows
  // of threads, each thread 2 channels x 7 columns; 16 x 16 blocks.
  EXPECT_EQ(m->kernels[0].block[0], 112);
  EXPECT_EQ(m->kernels[0].grid[0], 256);
  ASSERT_EQ(m->workspace_bytes.size(), 1u);
  EXPECT_EQ(m->workspace_bytes[0], 16 * 25088 * 4);
  // The sum of the partials: one output element per thread, 256 threads.
  EXPECT_EQ(m->kernels[1].block[0], 256);
  EXPECT_EQ(m->kernels[1].grid[0], 98);
}

// add_rms_norm's sum, computed at the row a block's threads own, covers that row alone: no thread
// loops over all 96 rows (a global buffer computed at a thread loop would cover every block's rows).
TEST(Sketches, ASideOutputAtTheRowIsWrittenOncePerRow) {
  tir::Workload w = Make("add_rms_norm", "M=96,N=1024");
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    auto sch = RandomScheduleOfSketch(w, *FindSketch("cuda.rows"), seed);
    ASSERT_TRUE(sch) << sch.error().message;
    auto f = tir::Lower(sch->state());
    ASSERT_TRUE(f) << f.error().message;
    auto m = tir::CodegenCuda(*f);
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_NE(m->code.find("sum["), std::string::npos);
    EXPECT_EQ(m->code.find("< 96;"), std::string::npos) << m->code;
  }
}

TEST(Sketches, RandomSchedulesDrawEveryOfferedSketch) {
  tir::Workload conv = Make("conv2d", kLateConv);
  int split = 0, plain = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    auto sch = RandomSchedule(conv, TargetKind::kCuda, seed);
    if (!sch) continue;
    (HasInstruction(*sch, "rfactor") ? split : plain)++;
  }
  EXPECT_GT(split, 5);
  EXPECT_GT(plain, 5);
}

// SketchOfTrace tells every sketch's schedules apart, whatever their sampled decisions, on every
// operator kind; a cuda trace with no rule's mark (no shared copy) counts as cuda.direct.
// Tensor cores: offered for 16-bit matrix products of any shape (padded to whole tiles) and for
// 16-bit convolutions (implicit GEMM), and their default; never for float32 ieee. Searched alone by
// default where every dimension of a matrix product holds a whole 16x16x16 tile; the FMA sketches
// still when named, or beside it for smaller products and for convolutions.
TEST(Sketches, TensorCoresServeSixteenBitMatrixProducts) {
  auto offers = [](const tir::Workload& w) {
    for (const SketchSpec* s : ApplicableSketches(tir::Schedule(w, TargetKind::kCuda))) {
      if (s->name == "cuda.tensor_core") return true;
    }
    return false;
  };
  for (const char* dtype : {"float16", "bfloat16"}) {
    const tir::Workload w = Make("gemm", "M=128,N=64,K=256", dtype);
    EXPECT_TRUE(offers(w)) << dtype;
    EXPECT_EQ(DefaultSketch(tir::Schedule(w, TargetKind::kCuda)), FindSketch("cuda.tensor_core")) << dtype;
    EXPECT_TRUE(offers(Make("batch_matmul", "B=3,M=32,N=8,K=16", dtype))) << dtype;
    EXPECT_TRUE(offers(Make("gemm", "M=100,N=60,K=24", dtype))) << dtype;  // padded to whole tiles
    const tir::Workload conv = Make("conv2d", "N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1", dtype);
    EXPECT_TRUE(offers(conv)) << dtype;
    EXPECT_EQ(DefaultSketch(tir::Schedule(conv, TargetKind::kCuda)), FindSketch("cuda.tensor_core")) << dtype;
    EXPECT_GT(Offered(conv, TargetKind::kCuda).size(), 1u) << dtype;
  }
  EXPECT_FALSE(offers(Make("conv2d", "N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1")));
  EXPECT_FALSE(offers(Make("gemm", "M=128,N=64,K=256")));
  const tir::Workload half = Make("gemm", "M=128,N=64,K=256", "float16");
  EXPECT_EQ(Offered(half, TargetKind::kCuda), std::vector<std::string>{"cuda.tensor_core"});
  EXPECT_EQ(ApplicableSketches(tir::Schedule(half, TargetKind::kCuda), {"cuda.tiled", "cuda.tensor_core"}).size(), 2u);
  const std::vector<std::string> small = Offered(Make("batch_matmul", "B=3,M=32,N=8,K=16", "float16"), TargetKind::kCuda);
  EXPECT_GT(small.size(), 1u);
  EXPECT_EQ(small.front(), "cuda.tensor_core");
  EXPECT_EQ(DefaultSketch(tir::Schedule(Make("gemm", "M=128,N=64,K=256"), TargetKind::kCuda)), FindSketch("cuda.tiled"));
}

TEST(Sketches, EveryScheduleIsKnownAsTheSketchThatMadeIt) {
  const std::vector<std::tuple<std::string, std::string, std::string>> workloads = {
      {"gemm", "M=2048,N=1024,K=1024", "float32"}, {"gemm", "M=16,N=4096,K=4096", "float32"},
      {"conv2d", kLateConv, "float32"}, {"conv2d", "N=16,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", "float32"},
      {"conv2d", "N=1,C=256,H=56,W=56,K=64,R=1,S=1", "float32"},
      {"conv2d", "N=1,C=32,H=112,W=112,K=32,R=3,S=3,pad=1,groups=32", "float32"},
      {"batch_matmul", "B=12,M=128,N=128,K=64", "float32"}, {"gemm", "M=256,N=128,K=64", "float16"},
      {"batch_matmul", "B=2,M=64,N=64,K=32", "bfloat16"}, {"conv2d", "N=2,C=16,H=14,W=14,K=32,R=3,S=3,pad=1", "float16"},
      {"conv2d", "N=2,C=64,H=7,W=7,K=64,R=3,S=3,pad=1", "float16"},  // tensor-core split-K
      {"softmax", "M=64,N=1000", "float32"},
      {"norm", "B=1,M=256,N=256", "float32"}};
  std::vector<std::string> every;
  for (const auto& s : BuiltinSketches()) every.push_back(s.name);
  std::set<std::string> seen;
  for (TargetKind target : {TargetKind::kCuda, TargetKind::kCpu}) {
    for (const auto& [op, shape, dtype] : workloads) {
      tir::Workload w = Make(op, shape, dtype);
      for (const SketchSpec* s : ApplicableSketches(tir::Schedule(w, target), every)) {
        seen.insert(s->name);
        tir::Schedule hand_picked(w, target);
        ASSERT_TRUE(ApplySketch(hand_picked, *s, DefaultDecisions(tir::Schedule(w, target), *s)));
        EXPECT_EQ(SketchOfTrace(hand_picked.trace(), target), s) << s->name << " " << op << " " << shape;
        for (uint64_t seed = 1; seed <= 30; ++seed) {
          auto sch = RandomScheduleOfSketch(w, *s, seed);
          if (!sch) continue;
          EXPECT_EQ(SketchOfTrace(sch->trace(), target), s) << s->name << " " << op << " " << shape << " seed " << seed;
          EXPECT_EQ(sch->trace().ToJsonText(), sch->trace().ToJson().dump());  // the search's trace identity
        }
      }
    }
    // No accumulator stage (cache_write) and no copy: no cuda sketch's, and cpu.tiled's structure.
    EXPECT_EQ(SketchOfTrace(tir::Trace(), target), target == TargetKind::kCuda ? nullptr : FindSketch("cpu.tiled"));
    EXPECT_EQ(tir::Trace().ToJsonText(), tir::Trace().ToJson().dump());
  }
  EXPECT_EQ(seen.size(), BuiltinSketches().size());  // every sketch was checked
}

TEST(Sketches, RandomSchedulesReachEveryBlockSizeClass) {
  // A batch-16 convolution: drawn without a block size class, 4 of 120 samples had 512 or more
  // threads per block (97 fewer than 256); with the classes 11 (86). (The tiled sketch: the im2col
  // one's copies are larger, and its large blocks rarely fit in shared memory.)
  tir::Workload conv = Make("conv2d", "N=16,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1");
  int small = 0, medium = 0, large = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    auto sch = RandomScheduleOfSketch(conv, *FindSketch("cuda.tiled"), seed);
    if (!sch) continue;
    auto f = tir::Lower(sch->state());
    if (!f) continue;
    auto m = tir::CodegenCuda(*f);
    if (!m) continue;
    const int64_t threads = m->kernels[0].block[0] * m->kernels[0].block[1] * m->kernels[0].block[2];
    (threads < 256 ? small : threads < 512 ? medium : large)++;
  }
  const int all = small + medium + large;
  ASSERT_GT(all, 80);
  EXPECT_GT(medium, all / 10) << small << " / " << medium << " / " << large;
  EXPECT_GT(large, all / 20) << small << " / " << medium << " / " << large;
}

// An im2col tile holds a step's every reduction element, so its samples cap the step over all
// reduction axes at a gemm's k-tile. Drawn per axis (a channel step up to 32 times a 3x3 window
// step), 44 of 100 samples of this layer fit the GPU (the rest went over shared memory); now 71,
// as many as the tiled sketch's (73).
TEST(Sketches, Im2colSamplesFitTheGpuAsOftenAsTiledOnes) {
  tir::Workload conv = Make("conv2d", "N=16,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1");
  auto fitting = [&](const char* sketch) {
    const tir::GpuLimits sm90;
    int fit = 0;
    for (uint64_t seed = 1; seed <= 100; ++seed) {
      auto sch = RandomScheduleOfSketch(conv, *FindSketch(sketch), seed);
      if (!sch) continue;
      auto f = tir::Lower(sch->state());
      if (f && tir::CheckGpuValidity(*f, sm90).ok()) ++fit;
    }
    return fit;
  };
  const int im2col = fitting("cuda.im2col"), tiled = fitting("cuda.tiled");
  EXPECT_GT(im2col, 60);
  EXPECT_GT(im2col, tiled - 15) << im2col << " against " << tiled;
}


// The cpu register tile (the innermost of the three-level spatial tiles) fits the target's vector
// registers: at most 12 of AVX2's 16 registers of 8 lanes; AVX-512's room is four times as large.
TEST(Sketch, CpuRegisterTilesFitTheTargetsVectorRegisters) {
  const tir::Workload w = Make("gemm", "M=128,N=128,K=128");
  auto largest_tile = [&](tir::Target target) {
    int64_t largest = 0;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      auto sch = RandomSchedule(w, target, seed, {"cpu.registers"});
      EXPECT_TRUE(sch) << sch.error().message;
      if (!sch) continue;
      int64_t elements = 1;
      for (const auto& inst : sch->trace().instructions()) {
        if (inst.kind == "sample_perfect_tile" && inst.decision.size() == 3) elements *= inst.decision.back().get<int64_t>();
      }
      largest = std::max(largest, elements);
    }
    return largest;
  };
  EXPECT_LE(largest_tile(tir::Target{TargetKind::kCpu, tir::CpuVectors{8, 16}}), 96);
  EXPECT_GT(largest_tile(TargetKind::kCpu), 96);
  // The default tile: two vectors wide, a quarter of the registers deep (8 x 32 on AVX-512, 4 x 16 on
  // AVX2), and the kernel prints vectors of the target's lanes.
  auto default_tile = [&](tir::Target target) {
    auto sch = DefaultSchedule(w, target);
    EXPECT_TRUE(sch);
    std::vector<int64_t> inner;
    for (const auto& inst : sch->trace().instructions()) {
      if (inst.kind == "sample_perfect_tile" && inst.decision.size() == 3) inner.push_back(inst.decision.back());
    }
    auto f = tir::Lower(sch->state());
    EXPECT_TRUE(f);
    EXPECT_EQ(f->vector_lanes, target.cpu.float_lanes);
    return inner;
  };
  EXPECT_EQ(default_tile(TargetKind::kCpu), (std::vector<int64_t>{8, 32}));
  EXPECT_EQ(default_tile(tir::Target{TargetKind::kCpu, tir::CpuVectors{8, 16}}), (std::vector<int64_t>{4, 16}));
}

// A channels-last convolution's register tile vectorizes its output channels (the last axis), which
// the KRSC weights have first: the default copies them per tile with K last (reorder_storage).
TEST(Sketch, ChannelsLastWeightsAreCopiedWithTheChannelsLast) {
  auto sch = DefaultSchedule(Make("conv2d_nhwc", "N=1,C=16,H=8,W=8,K=32,R=3,S=3,pad=1"), TargetKind::kCpu);
  ASSERT_TRUE(sch) << sch.error().message;
  bool moved = false;
  for (const auto& inst : sch->trace().instructions()) {
    moved |= inst.kind == "reorder_storage" && inst.attrs["order"] == nlohmann::json::array({1, 2, 3, 0});
  }
  EXPECT_TRUE(moved) << sch->trace().ToJson().dump();
}

}  // namespace
}  // namespace autotune::search
