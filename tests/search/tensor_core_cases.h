// The tensor-core schedules the CPU and GPU tests check: 16-bit matrix products, and float32 ones
// at tf32 and 3xtf32, at shapes that exercise one and several warps, tiles and k-chunks, an
// epilogue and a batch.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "measure/builder.h"
#include "measure/runner.h"
#include "tests/search/correctness_config.h"
#include "search/tensor_core_schedule.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"

namespace autotune::search {

struct Case {
  std::string op, shape, epilogue, dtype;
  TensorCoreTiling tiling;
};

inline std::vector<Case> Cases() {
  TensorCoreTiling small{1, 1, 1, 1, 1, 1};  // one warp, one tile, single-buffered copies
  TensorCoreTiling wide{2, 2, 2, 4, 2};
  return {
      {"gemm", "M=64,N=64,K=64", "", "float16", wide},
      {"gemm", "M=32,N=48,K=32", "", "bfloat16", TensorCoreTiling{2, 1, 1, 2, 1}},
      {"gemm", "M=64,N=32,K=48", "bias,relu", "float16", TensorCoreTiling{1, 2, 2, 1, 3}},
      {"batch_matmul", "B=3,M=32,N=16,K=32", "", "float16", small},
      {"gemm", "M=33,N=17,K=40", "relu", "float16", TensorCoreTiling{1, 1, 3, 3, 2, 2}},  // padded to 48x24x64
      {"batch_matmul", "B=2,M=9,N=13,K=7", "", "bfloat16", TensorCoreTiling{1, 2, 1, 1, 2, 1}},  // 16x16x32
      // Copies 4 and 3 chunks deep (8 and 4 chunks): the pipeline's prologue, steady state and tail.
      {"gemm", "M=64,N=32,K=128", "", "float16", TensorCoreTiling{1, 2, 2, 2, 1, 4}},
      {"batch_matmul", "B=2,M=40,N=24,K=100", "relu", "bfloat16", TensorCoreTiling{1, 1, 3, 3, 2, 3}},  // 48x24x128
      // Consecutive blocks grouped 2 and 4 block rows deep, a group split by the block columns.
      {"gemm", "M=64,N=48,K=32", "bias", "float16", TensorCoreTiling{1, 1, 1, 2, 1, 2, false, 2}},
      {"batch_matmul", "B=2,M=64,N=32,K=32", "", "bfloat16", TensorCoreTiling{1, 1, 1, 1, 1, 2, false, 4}},
      // float32 at TF32 and 3xTF32 (8-deep steps; the product cached in registers without an epilogue).
      {"gemm", "M=64,N=64,K=64", "", "tf32", wide},
      {"gemm", "M=64,N=32,K=96", "bias,relu", "3xtf32", TensorCoreTiling{1, 2, 2, 2, 4, 3}},
      {"batch_matmul", "B=2,M=9,N=13,K=7", "", "3xtf32", TensorCoreTiling{1, 2, 1, 1, 2, 1}},  // 16x16x32
      {"gemm", "M=33,N=17,K=40", "gelu", "tf32", TensorCoreTiling{1, 1, 3, 3, 1, 2}},
      // Convolutions as implicit GEMMs (matrix_form): M the output channels, N the batch and pixels, K
      // the channels and window; strided, dilated, padded windows; odd sizes padded to whole tiles.
      {"conv2d", "N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1", "", "float16", TensorCoreTiling{1, 2, 1, 4, 1, 2}},
      {"conv2d", "N=2,C=3,H=7,W=9,K=10,R=3,S=3,stride=2,pad=1", "bias,relu", "bfloat16", TensorCoreTiling{1, 1, 1, 5, 2, 1}},
      {"conv2d", "N=1,C=8,H=9,W=9,K=32,R=3,S=3,pad=2,dilation=2", "", "float16", TensorCoreTiling{2, 1, 1, 4, 1, 3}},
      {"conv1d", "N=1,C=8,L=20,K=16,R=3,pad=1", "relu", "float16", TensorCoreTiling{1, 1, 1, 3, 2, 2}},
      {"conv3d", "N=1,C=4,D=4,H=5,W=5,K=16,Q=3,R=3,S=3,pad=1", "", "bfloat16", TensorCoreTiling{1, 2, 1, 2, 1, 2}},
      {"conv2d", "N=1,C=8,H=6,W=6,K=16,R=3,S=3,pad=1", "", "tf32", TensorCoreTiling{1, 1, 1, 5, 1, 2}},
      {"conv1d", "N=2,C=6,L=10,K=16,R=3,pad=1", "bias", "3xtf32", TensorCoreTiling{1, 1, 1, 3, 2, 2}},
      // Channels last, B (the input's im2col tile) copied into [n][k] rows along its channels.
      {"conv2d_nhwc", "N=2,C=16,H=6,W=6,K=16,R=3,S=3,pad=1", "bias", "float16", TensorCoreTiling{1, 2, 1, 4, 1, 2, true}},
      {"conv2d_nhwc", "N=1,C=8,H=7,W=5,K=24,R=3,S=3,stride=2,pad=1", "relu", "bfloat16", TensorCoreTiling{1, 1, 1, 2, 2, 3, true}},
      {"conv2d_nhwc", "N=1,C=8,H=6,W=6,K=16,R=3,S=3,pad=1", "", "tf32", TensorCoreTiling{1, 1, 1, 5, 1, 2, true}},
      {"conv2d_nhwc", "N=1,C=16,H=6,W=6,K=16,R=1,S=1", "", "float16", TensorCoreTiling{1, 1, 1, 5, 1, 1, false}},
      {"conv2d", "N=1,C=16,H=8,W=8,K=32,R=3,S=3,pad=1", "relu", "float16", TensorCoreTiling{1, 1, 1, 4, 1, 2, false, 2}},
      // Register-staged im2col gathers with fragments loaded a step ahead: 3 stages (the stores after
      // the last mma) and 2 (before the barrier).
      {"conv2d", "N=2,C=32,H=8,W=8,K=16,R=3,S=3,pad=1", "bias", "float16", TensorCoreTiling{1, 1, 1, 4, 2, 3}},
      {"conv2d", "N=1,C=24,H=6,W=6,K=16,R=3,S=3,pad=1", "", "bfloat16", TensorCoreTiling{1, 1, 1, 5, 2, 2}},
  };
}

struct Lowered {
  std::string name;
  tir::PrimFunc func;
};

// The case lowered; nothing (and a test failure) when it does not schedule or lower.
inline std::optional<Lowered> LowerCase(const Case& c, const tir::LowerOptions& options = {}) {
  auto w = tir::MakeWorkload(c.op, c.shape, c.epilogue, c.dtype);
  if (!w) return ADD_FAILURE() << w.error().message, std::nullopt;
  auto sch = TensorCoreSchedule(*w, c.tiling);
  if (!sch) return ADD_FAILURE() << c.op << " " << c.shape << ": " << sch.error().message, std::nullopt;
  auto f = tir::Lower(sch->state(), options);
  if (!f) return ADD_FAILURE() << f.error().message << "\n" << sch->trace().ToText(), std::nullopt;
  return Lowered{fmt::format("{}\n{}", w->CanonicalText(), sch->trace().ToText()), *f};
}

// Builds and runs the kernel of a case: it must give the reference's answer.
inline void ExpectCorrect(const Case& c, measure::Builder& builder, measure::Runner& runner) {
  auto w = tir::MakeWorkload(c.op, c.shape, c.epilogue, c.dtype);
  ASSERT_TRUE(w) << w.error().message;
  const std::optional<Lowered> lowered = LowerCase(c);
  if (!lowered) return;
  const Lowered& l = *lowered;
  auto builds = builder.Build({measure::BuildInput::FromFunc(l.func)});
  auto results = runner.Run(*w, builds);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].correct) << l.name << "\n" << measure::ErrorKindName(results[0].error_kind) << ": "
                                  << results[0].error_message << "\n" << builds[0].source;
}

}  // namespace autotune::search
